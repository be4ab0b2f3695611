-- 0010: pruning the history of ended jobs (sparkpack prune). job_events
-- stays append-only for everything else: a DELETE passes only inside a
-- transaction that set sparkpack.prune to 'on' (store.PruneEnded), and
-- UPDATE never does.
CREATE OR REPLACE FUNCTION job_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('sparkpack.prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'job_events is append-only';
END;
$$;
CREATE INDEX jobs_ended_finished_at ON jobs (finished_at)
    WHERE state IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED');
