-- 0013: run history (issue 27). Every finished attempt of a job (it ended,
-- failed, was killed, went back to the queue for a retry or was evicted)
-- is one row, written in the transaction that records the job's end. The
-- learned run-time model (package learned) is loaded from it at start and
-- on becoming leader. Append-only: UPDATE never passes, DELETE only inside
-- a transaction that set sparkpack.prune to 'on' (store.PruneEnded, which
-- deletes the runs that ended before its cut). No foreign key to jobs: a
-- run outlives its job's row until its own cut.
CREATE TABLE run_history (
    id                  bigserial PRIMARY KEY,
    job_id              uuid NOT NULL,
    attempt             integer NOT NULL DEFAULT 0,
    signature           text NOT NULL CHECK (signature <> ''),
    app_type            text NOT NULL DEFAULT '',
    estimate_key        text NOT NULL DEFAULT '',
    input_size_gb       double precision NOT NULL DEFAULT 0 CHECK (input_size_gb >= 0),
    iterations          integer NOT NULL DEFAULT 0 CHECK (iterations >= 0),
    executors           integer NOT NULL CHECK (executors > 0),
    executor_cores      integer NOT NULL DEFAULT 0,
    executor_memory_mb  integer NOT NULL DEFAULT 0,
    agents              integer NOT NULL DEFAULT 0,
    max_per_agent       integer NOT NULL DEFAULT 0,
    per_agent           integer[] NOT NULL DEFAULT '{}',
    cross_share         double precision NOT NULL DEFAULT 0 CHECK (cross_share >= 0 AND cross_share <= 1),
    busiest_load        double precision NOT NULL DEFAULT 0 CHECK (busiest_load >= 0 AND busiest_load <= 1),
    instance_types      text[] NOT NULL DEFAULT '{}',
    started_at          timestamptz NOT NULL,
    ended_at            timestamptz NOT NULL,
    seconds             double precision NOT NULL CHECK (seconds >= 0),
    outcome             text NOT NULL CHECK (outcome IN ('FINISHED','FAILED','KILLED','RETRIED','PREEMPTED')),
    estimate_seconds    double precision NOT NULL DEFAULT 0 CHECK (estimate_seconds >= 0),
    predicted_p50       double precision NOT NULL DEFAULT 0,
    predicted_p90       double precision NOT NULL DEFAULT 0,
    prediction_level    text NOT NULL DEFAULT ''
);
CREATE INDEX run_history_ended_at ON run_history (ended_at);
CREATE INDEX run_history_job ON run_history (job_id);

CREATE FUNCTION run_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('sparkpack.prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'run_history is append-only';
END;
$$;
CREATE TRIGGER run_history_append_only BEFORE UPDATE OR DELETE ON run_history
    FOR EACH ROW EXECUTE FUNCTION run_history_append_only();
