package probe

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Compare lists the differences between two records, step by step: a
// step missing on either side, or a step whose events differ (with the
// first lines that differ).
func Compare(want, got *Record) []string {
	var out []string
	gotSteps := map[string]Step{}
	for _, s := range got.Steps {
		gotSteps[s.Name] = s
	}
	seen := map[string]bool{}
	for _, w := range want.Steps {
		seen[w.Name] = true
		g, ok := gotSteps[w.Name]
		if !ok {
			out = append(out, fmt.Sprintf("step %q: missing", w.Name))
			continue
		}
		if d := diffLines(pretty(canonical(w.Events)), pretty(canonical(g.Events))); d != "" {
			out = append(out, fmt.Sprintf("step %q differs (- want, + got):\n%s", w.Name, d))
		}
	}
	for _, g := range got.Steps {
		if !seen[g.Name] {
			out = append(out, fmt.Sprintf("step %q: not in the reference", g.Name))
		}
	}
	return out
}

// resourceLists name the lists of resources whose order is not compared:
// a real master's order depends on the history of the agent (a
// reservation made and removed moves entries around).
var resourceLists = map[string]bool{"resources": true, "total_resources": true, "allocated_resources": true,
	"offered_resources": true, "used_resources": true, "unreserved_resources": true, "reserved_resources_full": true}

// canonical sorts the resource lists of a decoded JSON value.
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			c := canonical(val)
			if list, ok := c.([]any); ok && resourceLists[k] {
				keys := make([]string, len(list))
				for i, e := range list {
					b, _ := json.Marshal(e)
					keys[i] = string(b)
				}
				idx := make([]int, len(list))
				for i := range idx {
					idx[i] = i
				}
				sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
				sorted := make([]any, len(list))
				for i, j := range idx {
					sorted[i] = list[j]
				}
				c = sorted
			}
			out[k] = c
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = canonical(x[i])
		}
		return out
	}
	return v
}

func pretty(v any) []string {
	b, _ := json.MarshalIndent(v, "", " ")
	return strings.Split(string(b), "\n")
}

// diffLines is a small line diff (longest common subsequence) showing
// changed lines with a little context; "" when equal.
func diffLines(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			lines = append(lines, line{'+', b[j]})
			j++
		default:
			lines = append(lines, line{'-', a[i]})
			i++
		}
	}
	var sb strings.Builder
	changed := false
	for k, l := range lines {
		if l.op == ' ' {
			near := false
			for d := -2; d <= 2; d++ {
				if k+d >= 0 && k+d < len(lines) && lines[k+d].op != ' ' {
					near = true
				}
			}
			if !near {
				continue
			}
		} else {
			changed = true
		}
		fmt.Fprintf(&sb, "%c%s\n", l.op, l.text)
	}
	if !changed {
		return ""
	}
	return sb.String()
}
