-- The director's journal (CRASH-1): every input a tournament's director was given, in order, and
-- snapshots of the whole director now and then. A server that restarts restores the newest
-- snapshot it can read and gives the director the inputs after it: the same tournament again.
-- The hand that ended with an input is stored in the same transaction (hand_histories), so a
-- hand is in the history exactly when the tournament knows its result.

CREATE TABLE director_inputs (
    tournament_id text NOT NULL,
    seq           bigint NOT NULL CHECK (seq >= 1),
    at            double precision NOT NULL,   -- the input's clock time, seconds since the epoch
    input         bytea NOT NULL,              -- engine.tournament.inputs, MessagePack
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, seq)
);

CREATE TABLE director_snapshots (
    tournament_id text NOT NULL,
    seq           bigint NOT NULL CHECK (seq >= 0),  -- the last input it includes
    format        integer NOT NULL CHECK (format >= 1),
    data          bytea NOT NULL,                     -- DirectorSnapshot, MessagePack
    taken_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, seq)
);
