-- 0005: who did what. Every event a request caused names the token
-- (its name, never the token) and the client address; a job remembers the
-- token that submitted it, for --max-waiting-per-token and for tokens that
-- may cancel only their own jobs. Empty means "no token" (an open API, or
-- a row written before this migration or by the scheduler itself).
ALTER TABLE job_events
    ADD COLUMN actor  text NOT NULL DEFAULT '',
    ADD COLUMN client text NOT NULL DEFAULT '';
ALTER TABLE jobs
    ADD COLUMN submitted_by text NOT NULL DEFAULT '';
CREATE INDEX jobs_waiting_by_submitter ON jobs (submitted_by)
    WHERE state IN ('SUBMITTED', 'QUEUED') AND submitted_by <> '';
