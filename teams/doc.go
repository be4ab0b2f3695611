// Package teams is sparkpack's tenancy configuration and the pure rules
// of the team policy: who may use how much of the cluster.
//
// A teams file (serve --teams) lists one team a line with its settings:
// a weight for the fair share between teams, a guaranteed and a maximum
// amount of running cpus and memory, the most waiting and deadline jobs
// the team may have, and a budget in dollars a day or a month (parse.go).
// Parse refuses a bad file with an error naming its line; a Holder keeps
// the configuration in force and a Watcher loads the file again on SIGHUP
// or when it changes, keeping the previous configuration when the new one
// is refused (holder.go).
//
// The rules (policy.go) are pure functions of a team's settings and its
// usage: its weighted dominant share, whether it is below its guarantee,
// whether a job would take it past its maximum. The scheduler applies them
// in its pass (scheduler/teams.go); the API applies the intake caps.
//
// Jobs without a team form the default team "", and every team the file
// does not list has the default settings: weight 1, no guarantee, no
// limit, no budget. Without a teams file nothing changes.
//
// It must not import the scheduler, Mesos, SQL or HTTP packages: the
// scheduler and the API import it.
package teams
