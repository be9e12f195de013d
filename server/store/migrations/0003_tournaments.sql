-- Tournaments: the definition as the operator wrote it (TOML) and as parsed (JSON), the status
-- machine, and what happened to each player: registration, waiting list, entries, rebuys,
-- results and prizes. Money itself moves only in the ledger; these rows are the record of why.

CREATE TYPE tournament_status AS ENUM ('announced', 'registering', 'running', 'finished', 'cancelled');

CREATE TABLE tournaments (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    status      tournament_status NOT NULL DEFAULT 'announced',
    config_toml text NOT NULL,
    config      jsonb NOT NULL,
    starts_at   timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tournament_status_changes (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tournament_id text NOT NULL REFERENCES tournaments (id),
    from_status   tournament_status,
    to_status     tournament_status NOT NULL,
    changed_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tournament_status_changes_tournament ON tournament_status_changes (tournament_id, id);

-- The allowed transitions live here and in server/store/tournaments.py (TRANSITIONS); the
-- database refuses any other, whoever asks.
CREATE FUNCTION tournament_status_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.status <> 'announced' THEN
            RAISE EXCEPTION 'tournament % must start announced, not %', NEW.id, NEW.status
                USING ERRCODE = 'check_violation', CONSTRAINT = 'tournament_status_transition';
        END IF;
        INSERT INTO tournament_status_changes (tournament_id, from_status, to_status)
             VALUES (NEW.id, NULL, NEW.status);
        RETURN NEW;
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status THEN
        IF NOT ((OLD.status, NEW.status) IN (
                ('announced'::tournament_status, 'registering'::tournament_status),
                ('registering', 'running'),
                ('running', 'finished'),
                ('announced', 'cancelled'),
                ('registering', 'cancelled'),
                ('running', 'cancelled'))) THEN
            RAISE EXCEPTION 'tournament % cannot go from % to %', OLD.id, OLD.status, NEW.status
                USING ERRCODE = 'check_violation', CONSTRAINT = 'tournament_status_transition';
        END IF;
        INSERT INTO tournament_status_changes (tournament_id, from_status, to_status)
             VALUES (NEW.id, OLD.status, NEW.status);
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER tournaments_status_insert
    AFTER INSERT ON tournaments
    FOR EACH ROW EXECUTE FUNCTION tournament_status_guard();
CREATE TRIGGER tournaments_status_update
    BEFORE UPDATE OF status ON tournaments
    FOR EACH ROW EXECUTE FUNCTION tournament_status_guard();

-- One row per (tournament, player). 'waiting' rows are the waiting list, in queue_seq order.
CREATE TABLE registrations (
    tournament_id text NOT NULL REFERENCES tournaments (id),
    player_id     text NOT NULL,
    status        text NOT NULL CHECK (status IN ('registered', 'waiting', 'unregistered', 'refunded')),
    paid_with     text NOT NULL CHECK (paid_with IN ('cash', 'ticket')),
    queue_seq     bigint GENERATED ALWAYS AS IDENTITY,
    registered_at timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, player_id)
);
CREATE INDEX registrations_waiting ON registrations (tournament_id, queue_seq) WHERE status = 'waiting';

-- An entry is a stack in play: the first buy-in, and each re-entry after elimination.
CREATE TABLE entries (
    tournament_id text NOT NULL REFERENCES tournaments (id),
    player_id     text NOT NULL,
    entry_number  integer NOT NULL CHECK (entry_number >= 1),
    chips         bigint NOT NULL CHECK (chips > 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, player_id, entry_number)
);

CREATE TABLE rebuys (
    tournament_id text NOT NULL REFERENCES tournaments (id),
    player_id     text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('rebuy', 'add-on')),
    number        integer NOT NULL CHECK (number >= 1),
    chips         bigint NOT NULL CHECK (chips > 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, player_id, kind, number)
);

-- Finishing places; tied players (ELIM-2) share a place number. prize is integer cents.
CREATE TABLE results (
    tournament_id text NOT NULL REFERENCES tournaments (id),
    player_id     text NOT NULL,
    place         integer NOT NULL CHECK (place >= 1),
    prize         bigint NOT NULL DEFAULT 0 CHECK (prize >= 0),
    finished_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament_id, player_id)
);
