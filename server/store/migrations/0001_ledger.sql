-- The double-entry ledger. The database itself holds the money invariants, so that no code path
-- (ours, a psql session, a half-finished crash) can break them:
--   * every transaction's entries sum to zero and there are at least two (deferred, at commit);
--   * an account's balance is the sum of its entries (kept by a trigger on the entries; a direct
--     UPDATE of a balance is refused);
--   * no balance is negative except the house's and the cashier's (a CHECK);
--   * the ledger is append-only: entries and transactions are never updated or deleted.

CREATE TYPE ledger_reason AS ENUM (
    'buy-in', 'fee', 'rebuy', 'add-on', 'refund', 'prize', 'deal', 'settlement',
    'deposit', 'withdrawal', 'bounty', 'overlay', 'ticket'
);

CREATE TABLE accounts (
    name       text PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('player', 'pool', 'ticket', 'house', 'cashier')),
    balance    bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT accounts_name_matches_kind CHECK (
        (kind = 'house' AND name = 'house')
        OR (kind = 'cashier' AND name = 'cashier')
        OR (kind = 'player' AND name ~ '^player:.+')
        OR (kind = 'pool' AND name ~ '^pool:.+')
        OR (kind = 'ticket' AND name ~ '^ticket:[^:]+:.+')
    ),
    CONSTRAINT accounts_balance_not_negative CHECK (balance >= 0 OR kind IN ('house', 'cashier'))
);

CREATE TABLE ledger_transactions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE,
    reason          ledger_reason NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE TABLE ledger_entries (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
    account        text NOT NULL REFERENCES accounts (name),
    amount         bigint NOT NULL CHECK (amount <> 0)
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account);

-- Balances follow the entries: one UPDATE per account per INSERT statement, whatever its size.
CREATE FUNCTION ledger_apply_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE accounts AS a
       SET balance = a.balance + n.delta
      FROM (SELECT account, sum(amount)::bigint AS delta FROM new_entries GROUP BY account) AS n
     WHERE a.name = n.account;
    RETURN NULL;
END;
$$;
CREATE TRIGGER ledger_entries_apply
    AFTER INSERT ON ledger_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_apply_entries();

-- A balance moves only through entries: a direct UPDATE (trigger depth 0 when WHEN is tested)
-- is refused, the entries trigger's UPDATE (depth 1) is allowed. The test is in WHEN, so the
-- normal path never calls the function.
CREATE FUNCTION accounts_guard_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'account % balance changes only through ledger entries', OLD.name
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER accounts_balance_guard
    BEFORE UPDATE OF balance ON accounts
    FOR EACH ROW
    WHEN (NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 1)
    EXECUTE FUNCTION accounts_guard_balance();

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER ledger_entries_append_only
    BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transactions_append_only
    BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

-- Checked at commit, once per new transaction: its entries exist (at least two) and sum to zero.
-- Entries added later to an old transaction are caught by the same check on the entries.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tx bigint;
    total numeric;
    n bigint;
BEGIN
    IF TG_TABLE_NAME = 'ledger_transactions' THEN
        tx := NEW.id;
    ELSE
        tx := NEW.transaction_id;
    END IF;
    SELECT coalesce(sum(amount), 0), count(*) INTO total, n FROM ledger_entries WHERE transaction_id = tx;
    IF n < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: % entries summing to %', tx, n, total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER ledger_transactions_balanced
    AFTER INSERT ON ledger_transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();
CREATE CONSTRAINT TRIGGER ledger_entries_balanced
    AFTER INSERT ON ledger_entries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

-- The kind of an account from its name ('player:7' -> 'player'); the accounts CHECKs refuse
-- names that are none of the known forms.
CREATE FUNCTION ledger_account_kind(name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN name IN ('house', 'cashier') THEN name ELSE split_part(name, ':', 1) END
$$;

-- Post a batch of transfers (parallel arrays, in order) in one call, hence in one round trip and
-- atomically even outside an explicit transaction. Promises (server/store/ledger.py says them
-- in full): keys already stored are replays, returned with their first result, unless they name
-- another movement (an 'idempotency_conflict' error); the fresh transfers apply in order and none
-- may take a non-house, non-cashier account below zero (an 'insufficient_funds' error whose
-- DETAIL is JSON: account, balance, amount, key); otherwise every fresh transfer becomes a ledger
-- transaction of two entries. Errors are RAISE (SQLSTATE P0001) with HINT 'feltd:<kind>'.
--
-- Locks first: transaction-scoped advisory locks on the batch's accounts (class 'LEDG',
-- hashtext(name)) taken in hash order, the same global order for everyone, so concurrent posts
-- never deadlock. (SELECT ... ORDER BY name FOR UPDATE was tried first and deadlocked under a
-- rush on one account: in READ COMMITTED a waiter following a row's update chain can end up
-- holding a later row while waiting for an earlier one.) Every statement after the locks takes a
-- newer snapshot, so it sees every balance committed by the locks' last holders.
CREATE FUNCTION ledger_post(keys text[], reasons text[], sources text[], targets text[], amounts bigint[])
RETURNS TABLE (out_key text, out_id bigint, out_created_at timestamptz, out_replayed boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    names text[] := ARRAY(SELECT DISTINCT a FROM unnest(sources || targets) AS a);
    clash record;
    short record;
BEGIN
    PERFORM pg_advisory_xact_lock(1279607879, k)
       FROM (SELECT DISTINCT hashtext(n) AS k FROM unnest(names) AS n ORDER BY k) AS ordered;
    INSERT INTO accounts (name, kind)
    SELECT n, ledger_account_kind(n) FROM unnest(names) AS n
     WHERE NOT EXISTS (SELECT 1 FROM accounts AS a WHERE a.name = n)
     ORDER BY n
    ON CONFLICT DO NOTHING;

    SELECT i.key, i.reason, i.source, i.target, i.amount,
           t.reason::text AS was_reason, d.account AS was_source, c.account AS was_target, c.amount AS was_amount
      INTO clash
      FROM unnest(keys, reasons, sources, targets, amounts) WITH ORDINALITY AS i(key, reason, source, target, amount, n)
      JOIN ledger_transactions AS t ON t.idempotency_key = i.key
      LEFT JOIN ledger_entries AS d ON d.transaction_id = t.id AND d.amount < 0
      LEFT JOIN ledger_entries AS c ON c.transaction_id = t.id AND c.amount > 0
     WHERE (t.reason::text, d.account, c.account, c.amount) IS DISTINCT FROM (i.reason, i.source, i.target, i.amount)
     ORDER BY i.n LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'idempotency key % already moved % cents % -> % (%); asked for % cents % -> % (%)',
            clash.key, clash.was_amount, clash.was_source, clash.was_target, clash.was_reason,
            clash.amount, clash.source, clash.target, clash.reason
            USING HINT = 'feltd:idempotency_conflict';
    END IF;

    -- The first fresh transfer, in order, that overdraws its source: each account's running
    -- balance after each of its legs is its balance plus the sum of its deltas so far.
    SELECT r.key, r.account, a.balance + r.running - r.delta AS before, -r.delta AS amount
      INTO short
      FROM (SELECT legs.n, legs.key, legs.account, legs.delta,
                   sum(legs.delta) OVER (PARTITION BY legs.account ORDER BY legs.n) AS running
              FROM (SELECT i.n, i.key, i.source AS account, -i.amount AS delta, i.amount
                      FROM unnest(keys, sources, amounts) WITH ORDINALITY AS i(key, source, amount, n)
                     WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions AS t WHERE t.idempotency_key = i.key)
                    UNION ALL
                    SELECT i.n, i.key, i.target, i.amount, i.amount
                      FROM unnest(keys, targets, amounts) WITH ORDINALITY AS i(key, target, amount, n)
                     WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions AS t WHERE t.idempotency_key = i.key)
                   ) AS legs
           ) AS r
      JOIN accounts AS a ON a.name = r.account
     WHERE r.delta < 0 AND a.kind NOT IN ('house', 'cashier') AND a.balance + r.running < 0
     ORDER BY r.n LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insufficient funds in %: balance % cents, transfer % needs % cents',
            short.account, short.before, short.key, short.amount
            USING HINT = 'feltd:insufficient_funds',
                  DETAIL = json_build_object('account', short.account, 'balance', short.before,
                                             'amount', short.amount, 'key', short.key)::text;
    END IF;

    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(keys, reasons, sources, targets, amounts) WITH ORDINALITY
            AS u(key, reason, source, target, amount, n)
    ), tx AS (
        INSERT INTO ledger_transactions (idempotency_key, reason)
        SELECT input.key, input.reason::ledger_reason FROM input ORDER BY input.key
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING ledger_transactions.id, ledger_transactions.idempotency_key, ledger_transactions.created_at
    ), entries AS (
        INSERT INTO ledger_entries (transaction_id, account, amount)
        SELECT tx.id, e.account, e.amount
          FROM tx JOIN input ON input.key = tx.idempotency_key
          CROSS JOIN LATERAL (VALUES (input.source, -input.amount), (input.target, input.amount))
               AS e(account, amount)
         ORDER BY tx.id
    )
    -- A key skipped by ON CONFLICT is a replay only if it names the same movement. It may have
    -- been committed by a racing post after the checks above, so compare again here; a key that
    -- does not match (or is not visible to this statement yet) comes back with a NULL id, and the
    -- caller asks again, when the check above sees it.
    SELECT input.key, coalesce(tx.id, old.id), coalesce(tx.created_at, old.created_at), tx.id IS NULL
      FROM input
      LEFT JOIN tx ON tx.idempotency_key = input.key
      LEFT JOIN LATERAL (
            SELECT t.id, t.created_at
              FROM ledger_transactions AS t
              JOIN ledger_entries AS d ON d.transaction_id = t.id AND d.amount < 0
              JOIN ledger_entries AS c ON c.transaction_id = t.id AND c.amount > 0
             WHERE t.idempotency_key = input.key AND t.reason::text = input.reason
               AND d.account = input.source AND c.account = input.target AND c.amount = input.amount
           ) AS old ON tx.id IS NULL
     ORDER BY input.n;
END;
$$;
