package simulate

import (
	"flag"
	"strings"
)

// nearFlags names the defined flags close to an undefined one of err
// (--policy: --policies; --job-logs: --job-log): one is a prefix of the
// other, or they are at most 2 edits apart (3 from a name of 6 or more).
func nearFlags(fs *flag.FlagSet, err error) []string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return nil
	}
	name = strings.TrimLeft(name, "-")
	if len(name) < 3 {
		return nil
	}
	limit := 2
	if len(name) >= 6 {
		limit = 3 // policy: policies
	}
	var out []string
	fs.VisitAll(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, name) || strings.HasPrefix(name, fl.Name) || editDistance(name, fl.Name) <= limit {
			out = append(out, fl.Name)
		}
	})
	return out
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev = cur
	}
	return prev[len(b)]
}
