//go:build !race

package offers

const raceEnabled = false
