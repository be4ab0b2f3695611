-- 0001: jobs, their events, placements, reservations, the framework id.
CREATE TABLE jobs (
    id              uuid PRIMARY KEY,
    seq             bigserial NOT NULL UNIQUE,
    name            text NOT NULL DEFAULT '',
    spec            jsonb NOT NULL,
    fingerprint     text NOT NULL,
    state           text NOT NULL CHECK (state IN ('SUBMITTED','QUEUED','PLACING','RESERVING','LAUNCHING',
                        'RUNNING','FINISHED','FAILED','KILLED','REJECTED','CANCELLED')),
    submitted_at    timestamptz NOT NULL,
    started_at      timestamptz,
    finished_at     timestamptz,
    deadline_at     timestamptz,
    waiting_reason  text NOT NULL DEFAULT '',
    at_risk         boolean NOT NULL DEFAULT false,
    kill_requested  boolean NOT NULL DEFAULT false,
    attempt         integer NOT NULL DEFAULT 0,
    labels          jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX jobs_state_seq ON jobs (state, seq);
CREATE INDEX jobs_labels ON jobs USING gin (labels jsonb_path_ops);

CREATE TABLE job_events (
    id          bigserial PRIMARY KEY,
    job_id      uuid NOT NULL REFERENCES jobs (id),
    at          timestamptz NOT NULL,
    from_state  text,
    to_state    text NOT NULL,
    reason      text NOT NULL DEFAULT ''
);
CREATE INDEX job_events_job ON job_events (job_id, id);

-- job_events is append-only.
CREATE FUNCTION job_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'job_events is append-only';
END;
$$;
CREATE TRIGGER job_events_no_change BEFORE UPDATE OR DELETE ON job_events
    FOR EACH ROW EXECUTE FUNCTION job_events_append_only();

CREATE TABLE placements (
    job_id      uuid NOT NULL REFERENCES jobs (id),
    agent_id    text NOT NULL,
    hostname    text NOT NULL DEFAULT '',
    executors   integer NOT NULL CHECK (executors > 0),
    policy      text NOT NULL DEFAULT '',
    outcome     text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (job_id, agent_id)
);

CREATE TABLE reservations (
    id          bigserial PRIMARY KEY,
    job_id      uuid NOT NULL REFERENCES jobs (id),
    agent_id    text NOT NULL,
    role        text NOT NULL,
    cpus        double precision NOT NULL CHECK (cpus >= 0),
    mem_mb      double precision NOT NULL CHECK (mem_mb >= 0),
    state       text NOT NULL CHECK (state IN ('planned','reserving','reserved','unreserving','released','failed')),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (job_id, agent_id)
);
CREATE INDEX reservations_state ON reservations (state);

CREATE TABLE framework (
    id            smallint PRIMARY KEY CHECK (id = 1),
    framework_id  text NOT NULL,
    updated_at    timestamptz NOT NULL
);
