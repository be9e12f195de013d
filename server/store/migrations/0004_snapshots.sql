-- Table state at hand boundaries (CRASH-1: after a crash each table restarts from the last hand
-- boundary). Snapshots are written in batches; each batch is one database transaction, so every
-- committed batch is a consistent point of the whole tournament.

CREATE TABLE snapshot_batches (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE table_snapshots (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    batch_id      bigint NOT NULL REFERENCES snapshot_batches (id),
    tournament_id text NOT NULL,
    table_id      text NOT NULL,
    hand_number   bigint NOT NULL CHECK (hand_number >= 0),
    level         integer NOT NULL CHECK (level >= 0),
    button        integer,
    -- [[seat, player_id, stack, time_banks], ...]; an empty list means the table was broken.
    seats         jsonb NOT NULL,
    taken_at      timestamptz NOT NULL
);
CREATE INDEX table_snapshots_latest ON table_snapshots (tournament_id, table_id, id DESC);
