-- A leaner ledger_post (issue 12: a single post at least as fast as a plain asyncpg transaction
-- per transfer). Same signature, same promises, same chain (0011), fewer statements per transfer:
--
--   * Each fresh transfer is ONE statement: its transaction row (ON CONFLICT DO NOTHING), then
--     the UPDATE of its two accounts, which computes each new balance and chain link from the
--     row it locks (head = sha256(head || text), the text of 0011 with balance + delta as the
--     running balance), and the INSERT of the two entries from what that UPDATE returns. The
--     funds and the 64-bit range are conditions of the transaction row's INSERT (so a refused
--     transfer draws no id: on an empty ledger an id handed out looks like a TRUNCATE to
--     `ledger check`) and again of the UPDATE, which applies them to the rows it locks; a
--     transfer that fails one is not written, or moves fewer than two accounts, and the
--     function then reads why and raises (the error undoes the whole call, its rows included).
--     Before, the balances and heads were read by a statement of their own and the links
--     computed from that read.
--   * A single transfer (n = 1, what the server posts most, without the writer) takes its two
--     account locks in the statement that asks whether its accounts exist, and does not look its
--     key up first: the INSERT skipping the key is the sign of a replay (or a conflict), looked
--     up then. Two statements in all for a fresh transfer whose accounts exist, four before.
--     A key committed by a racing post while this one waited is now answered as a replay (or a
--     conflict) at once, where 0011 raised serialization_failure and the caller asked again.
--   * Batches (n > 1) keep 0011's order: locks, keys already stored (replays, or a conflict
--     before anything is posted), the missing accounts made (one statement for the batch), then
--     the transfers in order; a key a racing post committed after those checks still aborts the
--     call with serialization_failure (HINT feltd:retry).
--   * ledger_entries_account is dropped: nothing reads entries by account alone (`ledger check`
--     reads all of them in account order, as a sort), and it cost two index insertions per post.

DROP INDEX ledger_entries_account;

-- The transfers of a batch whose keys are stored: each a replay (its position in the batch, key,
-- transaction and time) if the stored movement is the same (reason, source, target, amount),
-- else the batch's conflict, raised. Called by ledger_post only (no one else may execute it).
CREATE FUNCTION ledger_replays(keys text[], reasons text[], sources text[], targets text[], amounts bigint[])
RETURNS TABLE (r_n bigint, r_key text, r_id bigint, r_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
AS $$
DECLARE
    old record;
BEGIN
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
        r_n := old.n;
        r_key := old.key;
        r_id := old.id;
        r_at := old.created_at;
        RETURN NEXT;
    END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_post(keys text[], reasons text[], sources text[], targets text[], amounts bigint[])
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
    have bigint;
    src_balance bigint;
    src_kind text;
    tgt_balance bigint;
    tx_id bigint;
    tx_at timestamptz;
    moved bigint;
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

    -- Locks first: transaction-scoped advisory locks on the batch's accounts in hash order, the
    -- same global order for everyone (see 0001 for why not row locks). Every statement after
    -- them takes a newer snapshot, so it sees what the locks' last holders committed.
    IF n = 1 THEN
        -- Both locks, the lower hash first (a target list is evaluated in order; OFFSET 0 keeps
        -- the subquery, so both calls run once whatever the outer query needs), and how many
        -- of the two accounts exist: accounts are never removed, so one counted here exists.
        SELECT (SELECT count(*) FROM accounts AS a WHERE a.name = sources[1] OR a.name = targets[1])
          INTO have
          FROM (SELECT pg_advisory_xact_lock(1279607879, least(hashtext(sources[1]), hashtext(targets[1]))),
                       pg_advisory_xact_lock(1279607879, greatest(hashtext(sources[1]), hashtext(targets[1])))
                OFFSET 0) AS locked;
    ELSE
        IF (SELECT count(DISTINCT k) FROM unnest(keys) AS k) <> n THEN
            RAISE EXCEPTION 'an idempotency key appears twice in one batch' USING HINT = 'feltd:invalid';
        END IF;
        PERFORM pg_advisory_xact_lock(1279607879, k)
           FROM (SELECT DISTINCT hashtext(u.n) AS k FROM unnest(sources || targets) AS u(n) ORDER BY k) AS ordered;

        -- Keys already stored: replays if they name the same movement, else a conflict (nothing posts).
        IF EXISTS (SELECT FROM unnest(keys) AS k(key)
                    WHERE (SELECT true FROM ledger_transactions AS t WHERE t.idempotency_key = k.key)) THEN
            FOR old IN
                SELECT r.r_n AS n, r.r_key AS key, r.r_id AS id, r.r_at AS created_at
                  FROM ledger_replays(keys, reasons, sources, targets, amounts) AS r
            LOOP
                replayed := replayed || old.n::integer;
                replay_keys := replay_keys || old.key;
                replay_ids := replay_ids || old.id;
                replay_ats := replay_ats || old.created_at;
            END LOOP;
        END IF;
        have := 0;
    END IF;

    IF have < 2 THEN
        -- Accounts seen for the first time are made, at 0 (a name of no known form fails the
        -- accounts trigger). Under the locks no other post makes them meanwhile.
        INSERT INTO accounts (name, kind)
        SELECT DISTINCT u.n, ledger_account_kind(u.n)
          FROM unnest(sources || targets) AS u(n)
         WHERE NOT EXISTS (SELECT FROM accounts AS a WHERE a.name = u.n)
        ON CONFLICT (name) DO NOTHING;
    END IF;

    -- The fresh transfers in order, each one statement: its transaction, its two accounts moved
    -- with their running balances and links computed from the locked rows (only if the source
    -- has the funds and neither balance leaves the 64-bit range), its two entries from what the
    -- UPDATE returns.
    FOR i IN 1..n LOOP
        CONTINUE WHEN i = ANY (replayed);
        WITH tx AS (
            -- Only for a transfer the accounts allow: a refused one draws no transaction id (on an
            -- empty ledger an id handed out is what `ledger check` takes for a TRUNCATE).
            INSERT INTO ledger_transactions (idempotency_key, reason)
            SELECT keys[i], reasons[i]::ledger_reason
             WHERE EXISTS (SELECT FROM accounts AS s, accounts AS t
                            WHERE s.name = sources[i] AND t.name = targets[i]
                              AND (s.balance >= amounts[i] OR s.kind IN ('house', 'cashier'))
                              AND s.balance >= (-9223372036854775807 - 1) + amounts[i]
                              AND t.balance <= 9223372036854775807 - amounts[i])
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id, created_at
        ), moved AS (
            UPDATE accounts AS a
               SET balance = a.balance + m.delta,
                   head = sha256(coalesce(a.head, '\x'::bytea) || convert_to(
                       tx.id::text || '|' || m.delta::text || '|' || (a.balance + m.delta)::text || '|'
                       || length(keys[i])::text || ':' || keys[i] || '|' || length(a.name)::text || ':' || a.name,
                       'UTF8'))
              FROM tx, (VALUES (sources[i], -amounts[i]), (targets[i], amounts[i])) AS m(name, delta)
             WHERE a.name = m.name
               AND CASE WHEN m.delta > 0 THEN a.balance <= 9223372036854775807 - m.delta
                        ELSE a.balance >= (-9223372036854775807 - 1) - m.delta
                             AND (a.balance >= -m.delta OR a.kind IN ('house', 'cashier'))
                   END
            RETURNING tx.id, a.name, m.delta, a.balance, a.head
        ), entries AS (
            INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
            SELECT moved.id, moved.name, moved.delta, moved.balance, moved.head FROM moved
        )
        SELECT tx.id, tx.created_at, (SELECT count(*) FROM moved) INTO tx_id, tx_at, moved FROM tx;
        IF tx_id IS NULL AND EXISTS (SELECT FROM ledger_transactions AS t WHERE t.idempotency_key = keys[i]) THEN
            IF n = 1 THEN
                -- The key is stored (committed before, or by a post this one waited for): a
                -- replay if it names the same movement, else the conflict raised there.
                RETURN QUERY
                SELECT r.r_key, r.r_id, r.r_at, true FROM ledger_replays(keys, reasons, sources, targets, amounts) AS r;
                RETURN;
            END IF;
            -- Committed by a racing post after the checks above: nothing of this call may stay.
            RAISE EXCEPTION 'idempotency key % was posted concurrently', keys[i]
                USING ERRCODE = 'serialization_failure', HINT = 'feltd:retry';
        END IF;
        IF tx_id IS NULL OR moved <> 2 THEN
            -- Why the transfer was not written, or the UPDATE left an account out, read as the
            -- accounts are now (this call's earlier transfers included); the error undoes
            -- everything written.
            SELECT s.balance, s.kind, t.balance INTO src_balance, src_kind, tgt_balance
              FROM accounts AS s, accounts AS t
             WHERE s.name = sources[i] AND t.name = targets[i];
            IF src_kind NOT IN ('house', 'cashier') AND src_balance < amounts[i] THEN
                RAISE EXCEPTION 'insufficient funds in %: balance % cents, transfer % needs % cents',
                    sources[i], src_balance, keys[i], amounts[i]
                    USING HINT = 'feltd:insufficient_funds',
                          DETAIL = json_build_object('account', sources[i], 'balance', src_balance,
                                                     'amount', amounts[i], 'key', keys[i])::text;
            END IF;
            IF src_balance < (-9223372036854775807 - 1) + amounts[i] OR tgt_balance > 9223372036854775807 - amounts[i] THEN
                RAISE EXCEPTION 'transfer % (%) would take a balance past the 64-bit range', i, keys[i]
                    USING HINT = 'feltd:invalid';
            END IF;
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
