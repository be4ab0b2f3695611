-- 0021: when a driver launch was sent, kept per launch in driver_launches
-- (docs/learning.md, "How a run's times survive a restart").
--   launched_at: when its LAUNCH_SENT record was stored, just before the
--                ACCEPT with its LAUNCH went out; written with that record
--                and never overwritten (the later records of the launch,
--                a reconciliation's TASK_STAGING after a restart among
--                them, carry it or nothing).
-- Before, a restart took the launch's time from drivers.updated_at while
-- its state was still LAUNCH_SENT: a reconciliation's TASK_STAGING stored
-- after a restart moved on both, and a second restart lost the launch's
-- time (a run never seen running then had its end as its start).
-- Older rows and rows an older binary writes keep NULL: the launch is
-- timed as before. Older binaries name their columns, so they work
-- against this schema unchanged.
ALTER TABLE driver_launches
    ADD COLUMN launched_at timestamptz;
