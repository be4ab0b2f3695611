-- 0011: the cost meter's total, kept across restarts and failovers (the
-- leader adds what its own meter counted to the total it found).
CREATE TABLE cost_meter (
    id          smallint PRIMARY KEY CHECK (id = 1),
    total_usd   double precision NOT NULL CHECK (total_usd >= 0),
    updated_at  timestamptz NOT NULL
);
