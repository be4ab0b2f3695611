-- 0017: jobs stored before 0012 with a team label belong to that team
-- (as a job submitted now would), when the label is a team name; without
-- this, caps, ?team= listings, usage by team and budgets ignored them.
UPDATE jobs SET team = labels->>'team'
    WHERE team = '' AND labels ? 'team'
      AND labels->>'team' ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
