package store

// teamSQL is the SQL expression of a job's team (jobs as j; migration
// 0012): the empty name is the default team, and a job pruned from jobs
// has no team.
const teamSQL = "coalesce(j.team, '')"
