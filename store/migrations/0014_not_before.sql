-- 0014: a job's earliest start time (the REST field notBefore, kept in the
-- spec too), as a column for queries and the dashboard; jobs stored
-- before it take it from their spec.
ALTER TABLE jobs ADD COLUMN not_before timestamptz;
UPDATE jobs SET not_before = (spec->>'notBefore')::timestamptz WHERE spec ? 'notBefore';
