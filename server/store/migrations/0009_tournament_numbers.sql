-- Every tournament gets a number: the server numbers its tables from number * 1,000,000, so a
-- table id names one table of one tournament, and PokerStars histories name the tournament by it.
-- Hand histories name their table by its integer id, as table snapshots do since 0008.
ALTER TABLE tournaments ADD COLUMN number bigint GENERATED ALWAYS AS IDENTITY UNIQUE;
ALTER TABLE hand_histories ALTER COLUMN table_id TYPE bigint
    USING CASE WHEN table_id ~ '^[0-9]{1,18}$' THEN table_id::bigint ELSE 0 END;
