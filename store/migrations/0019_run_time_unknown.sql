-- 0019: a run whose time is not known. A driver can end before sparkpack
-- ever took its TASK_RUNNING (e.g. the update was acknowledged by a
-- process that crashed before it reported the job RUNNING, or an executor
-- that goes straight to TASK_FINISHED): it ran, so its attempt and outcome
-- are recorded, but when it started is not known. Its seconds are NULL
-- (started_at is then its launch, or its end when even that is not known),
-- and the learned model does not learn from it (docs/learning.md, "Runs
-- never seen running"). Rows written before keep their seconds.
ALTER TABLE run_history ALTER COLUMN seconds DROP NOT NULL;
