-- The entries trigger of 0006 reached the accounts through "name = ANY (array)", whose plan
-- depends on the statistics at planning time: on a fresh database (no statistics yet) it was a
-- sequential scan of every account for each INSERT of entries, until an ANALYZE made it replan.
-- Here the join is a nested loop over the touched accounts probing the primary key, whatever
-- the statistics say (hash and merge joins are off for this function only). Same promises.
CREATE OR REPLACE FUNCTION ledger_apply_entries() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
    bad record;
BEGIN
    UPDATE accounts AS a
       SET balance = a.balance + n.delta
      FROM (SELECT account, sum(amount)::bigint AS delta FROM new_entries GROUP BY account) AS n
     WHERE a.name = n.account;
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
