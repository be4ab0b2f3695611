package store

import (
	"context"
	"fmt"
)

// unfinishedStates is the predicate of the index jobs_team_unfinished
// (migration 0012): a query must spell it the same to use the index.
const unfinishedStates = `state IN ('SUBMITTED','QUEUED','PLACING','RESERVING','LAUNCHING','RUNNING')`

// CountTeamJobs returns how many of a team's jobs are waiting (SUBMITTED
// or QUEUED) and how many of its deadline jobs are not finished (waiting
// or holding resources): what the team's max-waiting and max-deadline
// caps count.
func (s *Store) CountTeamJobs(ctx context.Context, team string) (waiting, deadline int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT
			count(*) FILTER (WHERE state IN ('SUBMITTED','QUEUED')),
			count(*) FILTER (WHERE deadline_at IS NOT NULL)
		FROM jobs WHERE team = $1 AND `+unfinishedStates, team).Scan(&waiting, &deadline)
	if err != nil {
		return 0, 0, fmt.Errorf("count the jobs of team %q: %w", team, err)
	}
	return waiting, deadline, nil
}
