-- People who log in. Access tokens are random and shown once; only their SHA-256 is kept (a
-- 256-bit random token needs no slow hash: there is nothing to guess).

CREATE SEQUENCE player_ids;

CREATE TABLE players (
    id         text PRIMARY KEY DEFAULT nextval('player_ids')::text,
    name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE operators (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
