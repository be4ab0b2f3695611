-- 0012: a job's team, fixed at submission (the submitting token's team,
-- else the job's "team" label; '' is the default team). The scheduler
-- shares the cluster between teams by it and listings filter on it
-- (GET /api/v1/jobs?team=). jobs_team_seq serves the listings (newest
-- first) of jobs with a team; jobs_team_unfinished the per-team caps at
-- submission (CountTeamJobs: waiting and unfinished deadline jobs), and
-- holds only unfinished jobs.
ALTER TABLE jobs ADD COLUMN team text NOT NULL DEFAULT '';
CREATE INDEX jobs_team_seq ON jobs (team, seq) WHERE team <> '';
CREATE INDEX jobs_team_unfinished ON jobs (team)
    WHERE state IN ('SUBMITTED','QUEUED','PLACING','RESERVING','LAUNCHING','RUNNING');
