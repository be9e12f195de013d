-- Table snapshots carry what a restore needs (the engine's between-hands state of the table: seats
-- with absent, waiting and penalty flags, the button, the last blinds, the first button) beside
-- the summary columns, and the format they were written in. Table ids are integers everywhere:
-- the tournament director numbers its tables 1, 2, 3...
-- Snapshots of tables whose id is not a number predate this and no restore can use them; they go.
DELETE FROM table_snapshots WHERE table_id !~ '^[0-9]{1,18}$';
DROP INDEX table_snapshots_latest;
ALTER TABLE table_snapshots ALTER COLUMN table_id TYPE bigint USING table_id::bigint;
CREATE INDEX table_snapshots_latest ON table_snapshots (tournament_id, table_id, id DESC);
-- 1: seats only (rows written before this migration); 2: with ``state``.
ALTER TABLE table_snapshots ADD COLUMN format integer NOT NULL DEFAULT 1 CHECK (format IN (1, 2));
ALTER TABLE table_snapshots ADD COLUMN state jsonb;
ALTER TABLE table_snapshots ADD CONSTRAINT table_snapshots_state_format
    CHECK ((format = 2) = (state IS NOT NULL));
