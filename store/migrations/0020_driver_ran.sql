-- 0020: what a restart needs to count and time a run whose job was never
-- reported RUNNING (docs/learning.md, "Runs never seen running"), kept per
-- launch in driver_launches, where the drivers row reads it for its
-- attempt (a column on drivers would outlive its launch: an older binary
-- moving the row on to a new launch would not reset it).
--   ran:        an update proved the driver ran without its TASK_STARTING/
--               TASK_RUNNING seen (its executor's TASK_FAILED or TASK_KILLED
--               without a reason); only ever set.
--   running_at: when its TASK_STARTING/TASK_RUNNING was first taken; never
--               overwritten (a reconciliation re-sends TASK_RUNNING).
-- Older rows and rows an older binary writes keep the defaults (false,
-- NULL): such a run is proved, and timed, as before (drivers.started,
-- drivers.state, drivers.updated_at). Older binaries name their columns,
-- so they work against this schema unchanged.
ALTER TABLE driver_launches
    ADD COLUMN ran boolean NOT NULL DEFAULT false,
    ADD COLUMN running_at timestamptz;
