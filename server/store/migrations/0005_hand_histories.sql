-- Finished hands, as rendered by engine/history: PHH text, PokerStars text, and the players with
-- their stacks as JSON. Findable by hand id, by tournament and by player.

CREATE TABLE hand_histories (
    hand_id       text PRIMARY KEY,
    tournament_id text NOT NULL,
    table_id      text NOT NULL,
    hand_number   bigint NOT NULL,
    finished_at   timestamptz NOT NULL,
    players       jsonb NOT NULL,
    phh           text NOT NULL,
    pokerstars    text NOT NULL,
    stored_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hand_histories_tournament ON hand_histories (tournament_id, finished_at, hand_id);

CREATE TABLE hand_players (
    hand_id     text NOT NULL REFERENCES hand_histories (hand_id),
    player_id   text NOT NULL,
    finished_at timestamptz NOT NULL,
    PRIMARY KEY (hand_id, player_id)
);
CREATE INDEX hand_players_player ON hand_players (player_id, finished_at, hand_id);
