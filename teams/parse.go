package teams

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Period is the span a budget covers.
type Period string

// Budget periods.
const (
	PerDay   Period = "day"
	PerMonth Period = "month"
)

// Action is what happens to a team's new jobs once its budget is spent.
type Action string

// Budget actions.
const (
	// Hold keeps new jobs waiting (with the reason) until the period ends
	// or the budget is raised.
	Hold Action = "hold"
	// Reject refuses new jobs at submission.
	Reject Action = "reject"
)

// Budget is what a team may spend in a period.
type Budget struct {
	USD    float64 `json:"usd"`
	Period Period  `json:"period"`
	Action Action  `json:"action"`
}

// Team is one team's settings. A zero maximum means no limit.
type Team struct {
	Name string `json:"name"`
	// Line is the line of the teams file that configures the team (0 for
	// a team the file does not list).
	Line int `json:"line,omitempty"`
	// Weight scales the team's fair share (default 1).
	Weight float64 `json:"weight"`
	// Guaranteed cpus and memory (MiB): while the team uses less, its
	// jobs go before those of teams above their guarantee.
	GuaranteedCPUs  float64 `json:"guaranteedCPUs,omitempty"`
	GuaranteedMemMB float64 `json:"guaranteedMemoryMB,omitempty"`
	// Most cpus and memory (MiB) the team's running jobs may hold.
	MaxCPUs  float64 `json:"maxCPUs,omitempty"`
	MaxMemMB float64 `json:"maxMemoryMB,omitempty"`
	// Most jobs the team may have waiting, and deadline jobs not finished.
	MaxWaiting  int `json:"maxWaiting,omitempty"`
	MaxDeadline int `json:"maxDeadline,omitempty"`
	// Budget, when set, is enforced by the usage side (not this package).
	Budget *Budget `json:"budget,omitempty"`
}

// HasGuarantee reports whether the team has a guarantee.
func (t *Team) HasGuarantee() bool { return t.GuaranteedCPUs > 0 || t.GuaranteedMemMB > 0 }

// HasMax reports whether the team's running jobs are capped.
func (t *Team) HasMax() bool { return t.MaxCPUs > 0 || t.MaxMemMB > 0 }

// MinWeight and MaxWeight bound a team's weight: a million to one between
// two teams is far beyond any fair share an operator means, and keeps every
// weighted share finite.
const (
	MinWeight = 0.001
	MaxWeight = 1000.0
)

// Default is the settings of a team the file does not list (and of the
// default team ""): weight 1, no guarantee, no limit, no budget.
func Default(name string) Team { return Team{Name: name, Weight: 1} }

// Config is a parsed teams file. The zero value and nil have no team: every
// team has the default settings.
type Config struct {
	Teams  []Team `json:"teams"`
	byName map[string]int
}

// Team returns the settings of the named team (Default when unlisted).
func (c *Config) Team(name string) Team {
	if c != nil {
		if i, ok := c.byName[name]; ok {
			return c.Teams[i]
		}
	}
	return Default(name)
}

// Listed reports whether the file lists the team.
func (c *Config) Listed(name string) bool {
	if c == nil {
		return false
	}
	_, ok := c.byName[name]
	return ok
}

// Limits reports whether any team has a maximum of running resources and
// whether any has a guarantee.
func (c *Config) Limits() (anyMax, anyGuarantee bool) {
	if c == nil {
		return false, false
	}
	for i := range c.Teams {
		anyMax = anyMax || c.Teams[i].HasMax()
		anyGuarantee = anyGuarantee || c.Teams[i].HasGuarantee()
	}
	return anyMax, anyGuarantee
}

// Empty reports whether no team is configured (nothing to enforce).
func (c *Config) Empty() bool { return c == nil || len(c.Teams) == 0 }

// NameRE is what a team name looks like: letters, digits, '.', '_' and
// '-', at most 64, starting with a letter or a digit (the tokens file's
// team field is checked alike).
var NameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Keys are the settings a team line may carry.
var Keys = []string{"weight", "guaranteed-cpus", "guaranteed-memory", "max-cpus", "max-memory",
	"max-waiting", "max-deadline", "budget", "budget-action"}

// Parse reads a teams file: one team a line, its name then key=value
// settings in any order, e.g.
//
//	# team      settings
//	analytics   weight=2 guaranteed-cpus=16 guaranteed-memory=64g max-cpus=48 max-memory=192g
//	ml          max-waiting=200 max-deadline=10 budget=500/day budget-action=hold
//
// Memory is MiB, or a number with a unit (512m, 64g, 1t; powers of 1024).
// Blank lines and lines starting with # are skipped, and so is the rest of
// a line after " #". Errors name the line.
func Parse(r io.Reader) (*Config, error) {
	c := &Config{byName: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.Index(s, " #"); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		t, err := parseLine(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if prev, dup := c.byName[t.Name]; dup {
			return nil, fmt.Errorf("line %d: team %q is configured on line %d too; give each team one line", line, t.Name, c.Teams[prev].Line)
		}
		t.Line = line
		c.byName[t.Name] = len(c.Teams)
		c.Teams = append(c.Teams, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return c, nil
}

func parseLine(s string) (Team, error) {
	fields := strings.Fields(s)
	name := fields[0]
	if strings.Contains(name, "=") {
		return Team{}, fmt.Errorf("a line starts with the team's name, then key=value settings; %q is a setting", name)
	}
	if !NameRE.MatchString(name) {
		return Team{}, fmt.Errorf("team name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", clip(name))
	}
	t := Default(name)
	seen := map[string]bool{}
	action := ""
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return t, fmt.Errorf("team %s: %q is not a key=value setting (keys: %s)", name, clip(f), strings.Join(Keys, ", "))
		}
		if seen[k] {
			return t, fmt.Errorf("team %s: %s is set twice", name, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "weight":
			t.Weight, err = number(v)
			if err == nil && (t.Weight < MinWeight || t.Weight > MaxWeight) {
				// Shares are divided by the weight: a weight near 0 makes
				// them infinite, and infinite shares cannot be ordered.
				err = fmt.Errorf("must be from %g to %g", MinWeight, MaxWeight)
			}
		case "guaranteed-cpus":
			t.GuaranteedCPUs, err = number(v)
		case "guaranteed-memory":
			t.GuaranteedMemMB, err = memory(v)
		case "max-cpus":
			t.MaxCPUs, err = positive(number(v))
		case "max-memory":
			t.MaxMemMB, err = positive(memory(v))
		case "max-waiting":
			t.MaxWaiting, err = count(v)
		case "max-deadline":
			t.MaxDeadline, err = count(v)
		case "budget":
			t.Budget, err = budget(v)
		case "budget-action":
			action = v
			if v != string(Hold) && v != string(Reject) {
				err = fmt.Errorf("use %s or %s", Hold, Reject)
			}
		default:
			return t, fmt.Errorf("team %s: unknown setting %q (keys: %s)", name, clip(k), strings.Join(Keys, ", "))
		}
		if err != nil {
			return t, fmt.Errorf("team %s: %s=%s: %w", name, k, clip(v), err)
		}
	}
	if action != "" {
		if t.Budget == nil {
			return t, fmt.Errorf("team %s: budget-action without a budget (add budget=USD/day or budget=USD/month)", name)
		}
		t.Budget.Action = Action(action)
	}
	if t.MaxCPUs > 0 && t.GuaranteedCPUs > t.MaxCPUs {
		return t, fmt.Errorf("team %s: guaranteed-cpus %g is more than max-cpus %g", name, t.GuaranteedCPUs, t.MaxCPUs)
	}
	if t.MaxMemMB > 0 && t.GuaranteedMemMB > t.MaxMemMB {
		return t, fmt.Errorf("team %s: guaranteed-memory %g MiB is more than max-memory %g MiB", name, t.GuaranteedMemMB, t.MaxMemMB)
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// number is a non-negative finite number.
func number(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("not a number")
	case f < 0:
		return 0, fmt.Errorf("must not be negative")
	case f == 0:
		return 0, nil // not -0: budget=-0/day read $-0.00 in its reason
	}
	return f, nil
}

func positive(f float64, err error) (float64, error) {
	if err == nil && f == 0 {
		return 0, fmt.Errorf("must be more than 0 (leave the setting out for no limit)")
	}
	return f, err
}

func count(v string) (int, error) {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("not a whole number")
	case n < 0:
		return 0, fmt.Errorf("must not be negative")
	case n == 0:
		return 0, fmt.Errorf("must be at least 1 (leave the setting out for no limit)")
	}
	return n, nil
}

// memory is MiB: a number, or a number with a unit m, g or t (MiB, GiB,
// TiB; "mb", "mib", "gb", "gib", ... alike).
func memory(v string) (float64, error) {
	s, mult := unit(strings.ToLower(v))
	f, err := number(s)
	if err != nil {
		return 0, fmt.Errorf("%w (memory is MiB, or a number with a unit: 512m, 64g, 1t)", err)
	}
	if math.IsInf(f*mult, 0) {
		// 1e308t: finite as written, +Inf in MiB (which JSON cannot carry).
		return 0, fmt.Errorf("too large")
	}
	return f * mult, nil
}

// unit splits a memory size's unit off: the number and MiB per unit.
func unit(s string) (string, float64) {
	for _, u := range []struct {
		suffixes []string
		mult     float64
	}{{[]string{"tib", "tb", "t"}, 1024 * 1024}, {[]string{"gib", "gb", "g"}, 1024}, {[]string{"mib", "mb", "m"}, 1}} {
		for _, suf := range u.suffixes {
			if strings.HasSuffix(s, suf) {
				return strings.TrimSuffix(s, suf), u.mult
			}
		}
	}
	return s, 1
}

// budget is USD/day or USD/month ("$" and "usd" allowed: $500/day, 500usd/month).
func budget(v string) (*Budget, error) {
	amount, period, ok := strings.Cut(strings.ToLower(v), "/")
	if !ok || (period != string(PerDay) && period != string(PerMonth)) {
		return nil, fmt.Errorf("write dollars per day or per month, e.g. budget=500/day or budget=12000/month")
	}
	amount = strings.TrimSuffix(strings.TrimPrefix(amount, "$"), "usd")
	f, err := number(amount)
	if err != nil {
		return nil, fmt.Errorf("the amount: %w", err)
	}
	return &Budget{USD: f, Period: Period(period), Action: Hold}, nil
}

// Load reads and parses a teams file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("teams file: %w", err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("teams file %s: %w", path, err)
	}
	return c, nil
}

// CheckCapacity refuses a configuration whose guarantees the cluster
// (cpus, memory in MiB) cannot hold: a team's guarantee larger than the
// cluster, or guarantees that add up to more than it. The error names the
// line of the team that goes past it.
func (c *Config) CheckCapacity(cpus, memMB float64) error {
	if c == nil {
		return nil
	}
	var sumCPU, sumMem float64
	for _, t := range c.Teams {
		if t.GuaranteedCPUs > cpus+1e-9 {
			return fmt.Errorf("line %d: team %s: guaranteed-cpus %g is more than the cluster's %g cpus", t.Line, t.Name, t.GuaranteedCPUs, cpus)
		}
		if t.GuaranteedMemMB > memMB+1e-9 {
			return fmt.Errorf("line %d: team %s: guaranteed-memory %g MiB is more than the cluster's %g MiB", t.Line, t.Name, t.GuaranteedMemMB, memMB)
		}
		sumCPU += t.GuaranteedCPUs
		sumMem += t.GuaranteedMemMB
		if sumCPU > cpus+1e-9 {
			return fmt.Errorf("line %d: team %s: the guarantees add up to %g cpus with this team's, more than the cluster's %g", t.Line, t.Name, sumCPU, cpus)
		}
		if sumMem > memMB+1e-9 {
			return fmt.Errorf("line %d: team %s: the guarantees add up to %g MiB with this team's, more than the cluster's %g MiB", t.Line, t.Name, sumMem, memMB)
		}
	}
	return nil
}
