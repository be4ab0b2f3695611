// Package plural writes counts with their noun in the right number ("1
// executor", "2 executors", "0.5 cpus"), for messages people read. It
// knows only the regular English plural (noun + "s"), which is all
// sparkpack's nouns need; it imports nothing of sparkpack's.
package plural

import "strconv"

// N is n and the noun, plural unless n is 1.
func N(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// G is N for a quantity that may have a fraction, printed as %g prints it:
// only exactly 1 takes the singular (0.5 cpus, 1 cpu, 1.5 cpus).
func G(x float64, noun string) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if x == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}
