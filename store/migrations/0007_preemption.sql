-- 0007: preemption (issue 16).
-- preempt_requested, when not empty, is why the scheduler decided to evict
-- the job (it holds resources): the framework kills its driver, releases
-- its reservations and sends it back to QUEUED. Durable, so that whichever
-- process resumes the job finishes the eviction.
-- preemptions counts the evictions; lost_work_seconds the run time the
-- evicted runs had done (Spark cannot resume an application: it restarts).
-- last_started_at is when the current (or last) run started; started_at
-- stays the first run's.
ALTER TABLE jobs ADD COLUMN preempt_requested text NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN preemptions integer NOT NULL DEFAULT 0 CHECK (preemptions >= 0);
ALTER TABLE jobs ADD COLUMN lost_work_seconds double precision NOT NULL DEFAULT 0 CHECK (lost_work_seconds >= 0);
ALTER TABLE jobs ADD COLUMN last_started_at timestamptz;
