-- Tamper evidence and an all-or-nothing ledger_post (issue 12, ledger findings).
--
--   * Every entry carries its account's running balance after it (balance_after) and a link of a
--     per-account hash chain: hash = sha256(previous entry's hash of the account, or nothing for
--     its first entry || the entry's text), the text being
--         transaction_id|amount|balance_after|len(key):key|len(account):account
--     (lengths in characters, so no two entries share a text). accounts.head is the hash of the
--     account's newest entry. `feltd admin ledger check` recomputes all of it: an edit made
--     around the triggers (even by a superuser) shows as a balance that disagrees with the
--     entries, a link that does not recompute, a head that is not the newest link, or a
--     transaction that does not have exactly the two entries ledger_post writes.
--   * The entries trigger keeps balance and head, and refuses an INSERT whose running balances
--     do not follow from the account's balance. ledger_post does that work itself (it writes
--     exactly two entries per transaction, summing to zero, and moves the two balances and heads
--     by primary key): it runs with feltd.posting = 'on' (a SET clause of the function, undone
--     when it returns), under which the entries trigger is skipped and the balance guard lets its
--     UPDATEs through. That marker opens nothing to the server's role, which may not write a
--     ledger table at all; it spares each post the statement trigger's transition table and
--     queries (0.19 ms of server CPU of about 0.6).
--   * ledger_post posts a batch all or nothing: a key that a racing post committed after this
--     call's checks (so the INSERT skipped it) aborts the whole call with serialization_failure
--     (HINT feltd:retry), and the caller asks again, when the key shows as a replay or a conflict.
--     Before, the other transfers of the batch were committed and the caller told of a conflict.
--   * ledger_post is SECURITY DEFINER (search_path pinned), so the server's role needs no write
--     privilege on a ledger table: it may only call this function and read (the grants are made
--     at start-up by server/store/roles.py, for the role the server is configured with).
--   * ledger_post checks its input itself (array lengths, key sizes, positive amounts, two
--     different accounts, distinct keys) and raises HINT feltd:invalid, whoever calls it; an
--     unknown reason fails its cast.

ALTER TABLE ledger_entries ADD COLUMN balance_after bigint, ADD COLUMN hash bytea;
ALTER TABLE accounts ADD COLUMN head bytea;

-- The entries already there get their running balances and links, in entry order per account.
ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only;
DO $$
DECLARE
    e record;
    acct text := NULL;
    prev bytea := NULL;
    running bigint := 0;
BEGIN
    FOR e IN
        SELECT le.id, le.transaction_id, le.account, le.amount, t.idempotency_key AS key
          FROM ledger_entries AS le JOIN ledger_transactions AS t ON t.id = le.transaction_id
         ORDER BY le.account, le.id
    LOOP
        IF acct IS DISTINCT FROM e.account THEN
            IF acct IS NOT NULL THEN
                UPDATE accounts SET head = prev WHERE name = acct;
            END IF;
            acct := e.account;
            prev := NULL;
            running := 0;
        END IF;
        running := running + e.amount;
        prev := sha256(coalesce(prev, '\x'::bytea) || convert_to(
            format('%s|%s|%s|%s:%s|%s:%s', e.transaction_id, e.amount, running,
                   length(e.key), e.key, length(e.account), e.account), 'UTF8'));
        UPDATE ledger_entries SET balance_after = running, hash = prev WHERE id = e.id;
    END LOOP;
    IF acct IS NOT NULL THEN
        UPDATE accounts SET head = prev WHERE name = acct;
    END IF;
END;
$$;
ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only;
ALTER TABLE ledger_entries ALTER COLUMN balance_after SET NOT NULL, ALTER COLUMN hash SET NOT NULL;

-- The link of one entry, as `feltd admin ledger check` computes it (ledger_post writes the same
-- expression inline: a SQL function that cannot be inlined costs a plan per call).
CREATE FUNCTION ledger_link(prev bytea, tx bigint, key text, account text, amount bigint, balance_after bigint)
RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN sha256(coalesce(prev, '\x'::bytea) || convert_to(
        tx::text || '|' || amount::text || '|' || balance_after::text || '|' || length(key)::text || ':' || key
        || '|' || length(account)::text || ':' || account, 'UTF8'));
END;
$$;

-- Balances and heads follow the entries; every transaction an INSERT touched balances after it;
-- the running balances written must be the ones the account reaches.
CREATE OR REPLACE FUNCTION ledger_apply_entries() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
    bad record;
BEGIN
    WITH moved AS (
        UPDATE accounts AS a
           SET balance = a.balance + n.delta, head = n.last_hash
          FROM (SELECT account, sum(amount)::bigint AS delta,
                       (array_agg(hash ORDER BY id DESC))[1] AS last_hash,
                       (array_agg(balance_after ORDER BY id DESC))[1] AS last_balance
                  FROM new_entries GROUP BY account) AS n
         WHERE a.name = n.account
        RETURNING a.name, a.balance, n.last_balance
    )
    SELECT name, balance, last_balance INTO bad FROM moved WHERE balance <> last_balance LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'account % reaches balance % but its newest entry says %',
            bad.name, bad.balance, bad.last_balance
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_running_balance';
    END IF;
    SELECT t.transaction_id, s.n, s.total INTO bad
      FROM (SELECT DISTINCT transaction_id FROM new_entries) AS t
      CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(e.amount), 0) AS total
                            FROM ledger_entries AS e WHERE e.transaction_id = t.transaction_id) AS s
     WHERE s.n < 2 OR s.total <> 0
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: % entries summing to %',
            bad.transaction_id, bad.n, bad.total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER ledger_entries_apply ON ledger_entries;
CREATE TRIGGER ledger_entries_apply
    AFTER INSERT ON ledger_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT
    WHEN (current_setting('feltd.posting', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION ledger_apply_entries();

-- ledger_post writes each transaction's two entries, summing to zero, in the same call; the
-- check at commit is for everyone else.
DROP TRIGGER ledger_transactions_balanced ON ledger_transactions;
CREATE CONSTRAINT TRIGGER ledger_transactions_balanced
    AFTER INSERT ON ledger_transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (current_setting('feltd.posting', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION ledger_check_balanced();

-- A balance or head moves only through entries: the entries trigger (depth 1) or ledger_post.
DROP TRIGGER accounts_balance_guard ON accounts;
CREATE TRIGGER accounts_balance_guard
    BEFORE UPDATE OF balance, head ON accounts
    FOR EACH ROW
    WHEN ((NEW.balance, NEW.head) IS DISTINCT FROM (OLD.balance, OLD.head) AND pg_trigger_depth() < 1
          AND current_setting('feltd.posting', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION accounts_guard_balance();

DROP FUNCTION ledger_post(text[], text[], text[], text[], bigint[]);
CREATE FUNCTION ledger_post(keys text[], reasons text[], sources text[], targets text[], amounts bigint[])
RETURNS TABLE (out_key text, out_id bigint, out_created_at timestamptz, out_replayed boolean)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET feltd.posting = 'on'
AS $$
DECLARE
    n integer := coalesce(cardinality(keys), 0);
    i integer;
    old record;
    src_balance bigint;
    src_kind text;
    src_head bytea;
    tgt_balance bigint;
    tgt_kind text;
    tgt_head bytea;
    known boolean;
    tx_id bigint;
    tx_at timestamptz;
    src_after bigint;
    tgt_after bigint;
    replayed integer[] := '{}';
    replay_keys text[] := '{}';
    replay_ids bigint[] := '{}';
    replay_ats timestamptz[] := '{}';
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    IF coalesce(cardinality(reasons), 0) <> n OR coalesce(cardinality(sources), 0) <> n
       OR coalesce(cardinality(targets), 0) <> n OR coalesce(cardinality(amounts), 0) <> n THEN
        RAISE EXCEPTION 'ledger_post takes five arrays of one length' USING HINT = 'feltd:invalid';
    END IF;
    FOR i IN 1..n LOOP
        IF keys[i] IS NULL OR octet_length(keys[i]) NOT BETWEEN 1 AND 1024 THEN
            RAISE EXCEPTION 'transfer %: an idempotency key is 1 to 1024 bytes', i USING HINT = 'feltd:invalid';
        END IF;
        IF amounts[i] IS NULL OR amounts[i] <= 0 THEN
            RAISE EXCEPTION 'transfer % (%): the amount must be positive', i, keys[i] USING HINT = 'feltd:invalid';
        END IF;
        IF sources[i] IS NULL OR targets[i] IS NULL OR sources[i] = targets[i] THEN
            RAISE EXCEPTION 'transfer % (%): two different accounts', i, keys[i] USING HINT = 'feltd:invalid';
        END IF;
        -- (An unknown reason fails its cast to ledger_reason below: invalid_text_representation.)
    END LOOP;
    IF n > 1 AND (SELECT count(DISTINCT k) FROM unnest(keys) AS k) <> n THEN
        RAISE EXCEPTION 'an idempotency key appears twice in one batch' USING HINT = 'feltd:invalid';
    END IF;

    -- Locks first: transaction-scoped advisory locks on the batch's accounts in hash order, the
    -- same global order for everyone (see 0001 for why not row locks). Every statement after
    -- them takes a newer snapshot, so it sees what the locks' last holders committed.
    IF n = 1 THEN
        -- Both in one statement, the lower hash first (a target list is evaluated in order).
        PERFORM pg_advisory_xact_lock(1279607879, least(hashtext(sources[1]), hashtext(targets[1]))),
                pg_advisory_xact_lock(1279607879, greatest(hashtext(sources[1]), hashtext(targets[1])));
    ELSE
        PERFORM pg_advisory_xact_lock(1279607879, k)
           FROM (SELECT DISTINCT hashtext(u.n) AS k FROM unnest(sources || targets) AS u(n) ORDER BY k) AS ordered;
    END IF;

    -- Keys already stored: replays if they name the same movement, else a conflict (nothing posts).
    IF n = 1 THEN
        known := EXISTS (SELECT FROM ledger_transactions AS t WHERE t.idempotency_key = keys[1]);
    ELSE
        known := EXISTS (SELECT FROM unnest(keys) AS k(key)
                          WHERE (SELECT true FROM ledger_transactions AS t WHERE t.idempotency_key = k.key));
    END IF;
    IF known THEN
        FOR old IN
            SELECT i.n, i.key, i.reason, i.source, i.target, i.amount, t.id, t.created_at,
                   t.reason::text AS was_reason, t.source AS was_source, t.target AS was_target,
                   t.amount AS was_amount
              FROM unnest(keys, reasons, sources, targets, amounts) WITH ORDINALITY
                   AS i(key, reason, source, target, amount, n)
             CROSS JOIN LATERAL (
                   SELECT t.id, t.created_at, t.reason,
                          (SELECT d.account FROM ledger_entries AS d
                            WHERE d.transaction_id = t.id AND d.amount < 0 LIMIT 1) AS source,
                          (SELECT c.account FROM ledger_entries AS c
                            WHERE c.transaction_id = t.id AND c.amount > 0 LIMIT 1) AS target,
                          (SELECT c.amount FROM ledger_entries AS c
                            WHERE c.transaction_id = t.id AND c.amount > 0 LIMIT 1) AS amount
                     FROM ledger_transactions AS t WHERE t.idempotency_key = i.key LIMIT 1) AS t
             ORDER BY i.n
        LOOP
            IF (old.was_reason, old.was_source, old.was_target, old.was_amount)
               IS DISTINCT FROM (old.reason, old.source, old.target, old.amount) THEN
                RAISE EXCEPTION 'idempotency key % already moved % cents % -> % (%); asked for % cents % -> % (%)',
                    old.key, old.was_amount, old.was_source, old.was_target, old.was_reason,
                    old.amount, old.source, old.target, old.reason
                    USING HINT = 'feltd:idempotency_conflict';
            END IF;
            replayed := replayed || old.n::integer;
            replay_keys := replay_keys || old.key;
            replay_ids := replay_ids || old.id;
            replay_ats := replay_ats || old.created_at;
        END LOOP;
    END IF;

    -- The fresh transfers in order: each one's funds checked against the balance its account has
    -- at that step (an account seen for the first time is made, at 0), then its transaction, its
    -- two entries with their running balances and links, and the two balances and heads moved
    -- on, in one statement (each statement of a function costs a snapshot and an executor start).
    FOR i IN 1..n LOOP
        CONTINUE WHEN i = ANY (replayed);
        SELECT s.balance, s.kind, s.head, t.balance, t.kind, t.head
          INTO src_balance, src_kind, src_head, tgt_balance, tgt_kind, tgt_head
          FROM (SELECT) AS one
          LEFT JOIN accounts AS s ON s.name = sources[i]
          LEFT JOIN accounts AS t ON t.name = targets[i];
        IF src_kind IS NULL THEN
            INSERT INTO accounts (name, kind) VALUES (sources[i], ledger_account_kind(sources[i]))
            RETURNING balance, kind, head INTO src_balance, src_kind, src_head;
        END IF;
        IF tgt_kind IS NULL THEN
            INSERT INTO accounts (name, kind) VALUES (targets[i], ledger_account_kind(targets[i]))
            RETURNING balance, kind, head INTO tgt_balance, tgt_kind, tgt_head;
        END IF;
        IF src_kind NOT IN ('house', 'cashier') AND src_balance < amounts[i] THEN
            RAISE EXCEPTION 'insufficient funds in %: balance % cents, transfer % needs % cents',
                sources[i], src_balance, keys[i], amounts[i]
                USING HINT = 'feltd:insufficient_funds',
                      DETAIL = json_build_object('account', sources[i], 'balance', src_balance,
                                                 'amount', amounts[i], 'key', keys[i])::text;
        END IF;
        -- Compared so that nothing overflows (an exception block would cost a subtransaction).
        IF src_balance < (-9223372036854775807 - 1) + amounts[i] OR tgt_balance > 9223372036854775807 - amounts[i] THEN
            RAISE EXCEPTION 'transfer % (%) would take a balance past the 64-bit range', i, keys[i]
                USING HINT = 'feltd:invalid';
        END IF;
        src_after := src_balance - amounts[i];
        tgt_after := tgt_balance + amounts[i];
        WITH tx AS (
            INSERT INTO ledger_transactions (idempotency_key, reason) VALUES (keys[i], reasons[i]::ledger_reason)
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id, created_at
        ), link AS (
            SELECT tx.id, tx.created_at,
                   sha256(coalesce(src_head, '\x'::bytea) || convert_to(
                       tx.id::text || '|' || (-amounts[i])::text || '|' || src_after::text || '|'
                       || length(keys[i])::text || ':' || keys[i] || '|' || length(sources[i])::text || ':' || sources[i],
                       'UTF8')) AS src_link,
                   sha256(coalesce(tgt_head, '\x'::bytea) || convert_to(
                       tx.id::text || '|' || amounts[i]::text || '|' || tgt_after::text || '|'
                       || length(keys[i])::text || ':' || keys[i] || '|' || length(targets[i])::text || ':' || targets[i],
                       'UTF8')) AS tgt_link
              FROM tx
        ), entries AS (
            INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
            SELECT link.id, e.account, e.amount, e.balance_after, e.hash
              FROM link CROSS JOIN LATERAL (VALUES (sources[i], -amounts[i], src_after, link.src_link),
                                                   (targets[i], amounts[i], tgt_after, link.tgt_link))
                   AS e(account, amount, balance_after, hash)
        ), moved AS (
            -- Relative moves, checked below: a writer going around the account locks shows.
            UPDATE accounts AS a
               SET balance = a.balance + CASE WHEN a.name = sources[i] THEN -amounts[i] ELSE amounts[i] END,
                   head = CASE WHEN a.name = sources[i] THEN link.src_link ELSE link.tgt_link END
              FROM link
             WHERE a.name = sources[i] OR a.name = targets[i]
            RETURNING a.balance = CASE WHEN a.name = sources[i] THEN src_after ELSE tgt_after END AS ok
        )
        SELECT link.id, link.created_at, (SELECT bool_and(moved.ok) FROM moved) INTO tx_id, tx_at, known
          FROM link;
        IF tx_id IS NULL THEN
            -- Committed by a racing post after the checks above: nothing of this call may stay.
            RAISE EXCEPTION 'idempotency key % was posted concurrently', keys[i]
                USING ERRCODE = 'serialization_failure', HINT = 'feltd:retry';
        END IF;
        IF NOT known THEN
            RAISE EXCEPTION 'an account of transfer % moved under ledger_post', keys[i]
                USING ERRCODE = 'serialization_failure';
        END IF;
        out_key := keys[i];
        out_id := tx_id;
        out_created_at := tx_at;
        out_replayed := false;
        RETURN NEXT;
    END LOOP;

    IF cardinality(replay_keys) > 0 THEN
        RETURN QUERY
        SELECT r.key, r.id, r.at, true FROM unnest(replay_keys, replay_ids, replay_ats) AS r(key, id, at);
    END IF;
END;
$$;
