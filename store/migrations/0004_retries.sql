-- 0004: exact retry counting (issue 21).
-- jobs.failed_runs counts the application runs that failed (a driver that
-- ended other than TASK_FINISHED after it was launched, or whose agent was
-- lost); failed_run_task is the driver task counted last, so that counting
-- the same run again (after a crash) changes nothing.
-- drivers.lost_launches counts, in the current application attempt, the
-- launches Mesos lost before the driver started (TASK_UNKNOWN, TASK_LOST,
-- TASK_DROPPED, TASK_GONE): they are relaunched, not retried.
-- drivers.started is set once the driver reached TASK_STARTING or TASK_RUNNING.
ALTER TABLE jobs ADD COLUMN failed_runs integer NOT NULL DEFAULT 0 CHECK (failed_runs >= 0);
ALTER TABLE jobs ADD COLUMN failed_run_task text NOT NULL DEFAULT '';
ALTER TABLE drivers ADD COLUMN lost_launches integer NOT NULL DEFAULT 0 CHECK (lost_launches >= 0);
ALTER TABLE drivers ADD COLUMN started boolean NOT NULL DEFAULT false;
