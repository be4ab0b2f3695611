-- 0006: the leadership lease (package leader): one row, renewed by the
-- leader; token grows with every new leader and fences the leader-only
-- writes of a deposed one.
CREATE TABLE leader_lease (
    id          smallint PRIMARY KEY CHECK (id = 1),
    instance    text NOT NULL,
    url         text NOT NULL DEFAULT '',
    token       bigint NOT NULL,
    since       timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
