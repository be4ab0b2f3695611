-- 0012: a job's team, fixed at submission (the submitting token's team,
-- else the job's "team" label; '' is the default team). The scheduler
-- shares the cluster between teams by it and listings filter on it
-- (GET /api/v1/jobs?team=). The index covers only jobs with a team, in the
-- order listings read them (newest first).
ALTER TABLE jobs ADD COLUMN team text NOT NULL DEFAULT '';
CREATE INDEX jobs_team_seq ON jobs (team, seq) WHERE team <> '';
