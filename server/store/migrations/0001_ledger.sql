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

-- A balance moves only through entries: a direct UPDATE (trigger depth 1) is refused, the
-- entries trigger's UPDATE (depth 2) is allowed.
CREATE FUNCTION accounts_guard_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'account % balance changes only through ledger entries', OLD.name
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER accounts_balance_guard
    BEFORE UPDATE OF balance ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_guard_balance();

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

-- Lock accounts for a post and read their balances, in one round trip. Locks are transaction-
-- scoped advisory locks (class 'LEDG', hashtext(name)) taken in hash order, the same global order
-- for everyone, so concurrent posts never deadlock. (SELECT ... ORDER BY name FOR UPDATE was
-- tried first and deadlocked under a rush on one account: in READ COMMITTED a waiter following a
-- row's update chain can end up holding a later row while waiting for an earlier one.) Missing
-- accounts are created. The SELECT runs after the locks, so with its own, newer snapshot it sees
-- every balance committed by whoever held them before.
CREATE FUNCTION ledger_lock_accounts(names text[], kinds text[])
RETURNS TABLE (name text, balance bigint) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1279607879, k)
       FROM (SELECT DISTINCT hashtext(n) AS k FROM unnest(names) AS n ORDER BY k) AS ordered;
    INSERT INTO accounts (name, kind)
    SELECT u.n, u.k FROM unnest(names, kinds) AS u(n, k)
     WHERE NOT EXISTS (SELECT 1 FROM accounts AS a WHERE a.name = u.n)
     ORDER BY u.n
    ON CONFLICT DO NOTHING;
    RETURN QUERY SELECT a.name, a.balance FROM accounts AS a WHERE a.name = ANY(names);
END;
$$;
