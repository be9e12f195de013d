-- Fencing tokens (issue 15): a worker owns a tournament (its coordinator and tables) under a
-- lease in Redis, and every lease comes with a token from a per-resource counter that only
-- grows. Every write the owner makes calls feltd_fence in the same transaction: it locks the
-- resource's row until that transaction ends and
--   * refuses (SQLSTATE FD001, DETAIL the resource and the recorded token) a token lower than the
--     recorded one: that writer's lease expired and a newer owner has written or claimed since;
--   * records a higher one: a new owner's claim (made at acquisition, before it reads the journal)
--     or first write fences out every older token from then on.
-- A write that committed before the new owner's claim is seen by it (the claim waits for the
-- row lock, and the new owner reads the journal after its claim commits); a write after it is
-- refused. Without Redis (one process, the admin CLI) nothing calls feltd_fence: unfenced writes
-- are not checked.
--
-- The server's role may only read write_fences and call feltd_fence (SECURITY DEFINER, search path
-- pinned; grants in server/store/roles.py), so a worker cannot lower a recorded token.

CREATE TABLE write_fences (
    resource   text PRIMARY KEY CHECK (resource <> ''),
    token      bigint NOT NULL CHECK (token >= 1),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- resources[i] written with tokens[i]; each pair is checked, in resource order (a global lock order,
-- so two batches naming the same resources never deadlock on them) and, within a resource, oldest
-- token first: a batch carrying an old owner's write and the new owner's is refused for the old
-- one, never let through on the new one's token. Returns nothing: it raises or passes.
CREATE FUNCTION feltd_fence(resources text[], tokens bigint[]) RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    f record;
    recorded bigint;
BEGIN
    IF coalesce(cardinality(resources), 0) <> coalesce(cardinality(tokens), 0) THEN
        RAISE EXCEPTION 'feltd_fence takes two arrays of one length' USING HINT = 'feltd:invalid';
    END IF;
    FOR f IN
        SELECT DISTINCT r.resource, r.token
          FROM unnest(resources, tokens) AS r(resource, token)
         ORDER BY r.resource, r.token
    LOOP
        IF f.resource IS NULL OR f.resource = '' OR f.token IS NULL OR f.token < 1 THEN
            RAISE EXCEPTION 'a fence is a resource name and a token >= 1, got (%, %)', f.resource, f.token
                USING HINT = 'feltd:invalid';
        END IF;
        -- Locks the row whether or not it moves (ON CONFLICT DO UPDATE locks the conflicting row
        -- even when its WHERE is false): no claim can pass this transaction until it ends.
        INSERT INTO write_fences AS w (resource, token) VALUES (f.resource, f.token)
        ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, updated_at = now()
         WHERE w.token < EXCLUDED.token;
        SELECT w.token INTO recorded FROM write_fences AS w WHERE w.resource = f.resource;
        IF recorded > f.token THEN
            RAISE EXCEPTION 'fenced out: % is held with token %, this write carries token %',
                f.resource, recorded, f.token
                USING ERRCODE = 'FD001',
                      DETAIL = json_build_object('resource', f.resource, 'token', f.token,
                                                 'recorded', recorded)::text;
        END IF;
    END LOOP;
END;
$$;

-- A new owner's claim, made once at acquisition: like feltd_fence for one resource, but a token
-- EQUAL to the recorded one is refused too. Tokens come from a Redis counter; a Redis that came
-- back a step behind (restarted from an older dump, a lagging replica) hands the live owner's
-- token out again, and two owners with one token would both pass feltd_fence. Refused, the
-- claimant moves the counter past the recorded token and tries again with a fresh lease.
CREATE FUNCTION feltd_claim(resource text, token bigint) RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    recorded bigint;
BEGIN
    SELECT w.token INTO recorded FROM write_fences AS w WHERE w.resource = feltd_claim.resource FOR UPDATE;
    IF recorded IS NOT NULL AND recorded >= feltd_claim.token THEN
        RAISE EXCEPTION 'fenced out: % is held with token %, this claim carries token %',
            feltd_claim.resource, recorded, feltd_claim.token
            USING ERRCODE = 'FD001',
                  DETAIL = json_build_object('resource', feltd_claim.resource, 'token', feltd_claim.token,
                                             'recorded', recorded)::text;
    END IF;
    PERFORM feltd_fence(ARRAY[feltd_claim.resource], ARRAY[feltd_claim.token]);
END;
$$;
