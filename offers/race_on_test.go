//go:build race

package offers

// raceEnabled: the race detector is on (its instrumentation allocates too,
// so byte counts of allocations mean nothing under it).
const raceEnabled = true
