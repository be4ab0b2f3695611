package store

// teamSQL is the SQL expression of a job's team (jobs as j). Until the
// team column exists (migration 0012, teams), the team label stands in.
const teamSQL = "coalesce(j.labels->>'team', '')"
