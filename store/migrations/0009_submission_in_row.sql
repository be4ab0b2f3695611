-- 0009: a job's submission is recorded in its own row.
-- Storing a job used to write one or two job_events rows as well (stored
-- as SUBMITTED; then QUEUED or REJECTED at once), each with two index
-- entries and a foreign-key check that locks the new job row: about 60%
-- of what storing a submission cost PostgreSQL. submit_state now holds the
-- state the job was stored in (SUBMITTED, QUEUED or REJECTED) and
-- submitted_client the address the submission came from (its actor is
-- submitted_by); Store.Events shows those first events from the row, at
-- submitted_at. Jobs stored before keep their event rows (submit_state '').
ALTER TABLE jobs ADD COLUMN submit_state text NOT NULL DEFAULT ''
  CHECK (submit_state IN ('', 'SUBMITTED', 'QUEUED', 'REJECTED'));
ALTER TABLE jobs ADD COLUMN submitted_client text NOT NULL DEFAULT '';
