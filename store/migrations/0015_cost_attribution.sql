-- 0015: cost attribution. The cost meter splits every active agent-second
-- among the jobs holding something on the agent (by dominant share) and
-- keeps the rest as idle; this ledger keeps what it attributed, per
-- one-minute bucket and job, so that per-job costs + idle = the meter's
-- total (saved in the same transaction), across restarts and failovers.
-- A row is what one meter (writer: one leadership term) attributed to one
-- job in one bucket since it started: saves only raise it (greatest), so a
-- save sent twice counts once and terms add up. job_id is the nil uuid for
-- the idle remainder. There is no foreign key: pruning old jobs keeps
-- their cost in the ledger (the usage report shows it without a team).
CREATE TABLE cost_ledger (
    writer          uuid NOT NULL,
    bucket          timestamptz NOT NULL,
    job_id          uuid NOT NULL,
    cost_usd        double precision NOT NULL CHECK (cost_usd >= 0),
    cpu_seconds     double precision NOT NULL DEFAULT 0 CHECK (cpu_seconds >= 0),
    mem_mb_seconds  double precision NOT NULL DEFAULT 0 CHECK (mem_mb_seconds >= 0),
    PRIMARY KEY (writer, bucket, job_id)
);
CREATE INDEX cost_ledger_job ON cost_ledger (job_id);
CREATE INDEX cost_ledger_bucket ON cost_ledger (bucket);

-- What the meter counted before attribution existed stays unattributed
-- (part of the idle remainder), so that the ledger adds up to the meter.
INSERT INTO cost_ledger (writer, bucket, job_id, cost_usd)
SELECT '00000000-0000-0000-0000-000000000000', date_trunc('minute', updated_at),
       '00000000-0000-0000-0000-000000000000', total_usd
FROM cost_meter WHERE total_usd > 0;

-- The usage report's waiting times read the jobs first started in a window.
CREATE INDEX jobs_started_at ON jobs (started_at) WHERE started_at IS NOT NULL;
