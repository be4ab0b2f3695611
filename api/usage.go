package api

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// UsageSource computes usage reports from stored facts (package store).
type UsageSource interface {
	Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error)
}

// UsageView is the body of GET /api/v1/usage.
type UsageView struct {
	By          string           `json:"by"`
	From        time.Time        `json:"from"`
	To          time.Time        `json:"to"`
	StepSeconds float64          `json:"stepSeconds"`
	Rows        []store.UsageRow `json:"rows"`
	// Budgets (by=team, when budgets are set): each budgeted team's spend
	// in its current period against its budget, as last weighed.
	Budgets []chargeback.Verdict `json:"budgets,omitempty"`
	// Shares (by=team, with a teams file): each team's configured share and
	// what its running jobs hold now (on the leader; absent elsewhere).
	Shares []TeamShare `json:"shares,omitempty"`
}

// TeamShare is a team's weight, guarantee and maximum, with what its
// running jobs hold now (nil when this instance does not schedule).
type TeamShare struct {
	Team            string   `json:"team"`
	Weight          float64  `json:"weight"`
	GuaranteedCPUs  float64  `json:"guaranteedCpus,omitempty"`
	GuaranteedMemMB float64  `json:"guaranteedMemoryMB,omitempty"`
	MaxCPUs         float64  `json:"maxCpus,omitempty"`
	MaxMemMB        float64  `json:"maxMemoryMB,omitempty"`
	UsingCPUs       *float64 `json:"usingCpus,omitempty"`
	UsingMemMB      *float64 `json:"usingMemoryMB,omitempty"`
}

// teamShares lists the teams of the configuration in force, and any other
// team holding resources now, sorted by name.
func (s *Server) teamShares() []TeamShare {
	if s.cfg.Teams == nil {
		return nil
	}
	cfg := s.cfg.Teams.Get()
	var using map[string]teams.Usage
	if s.cfg.TeamUsage != nil {
		using = s.cfg.TeamUsage()
	}
	names := map[string]bool{}
	if cfg != nil {
		for _, t := range cfg.Teams {
			names[t.Name] = true
		}
	}
	for n := range using {
		names[n] = true
	}
	out := make([]TeamShare, 0, len(names))
	for n := range names {
		t := cfg.Team(n)
		sh := TeamShare{Team: n, Weight: t.Weight, GuaranteedCPUs: t.GuaranteedCPUs, GuaranteedMemMB: t.GuaranteedMemMB, MaxCPUs: t.MaxCPUs, MaxMemMB: t.MaxMemMB}
		if using != nil {
			u := using[n]
			sh.UsingCPUs, sh.UsingMemMB = &u.CPUs, &u.MemMB
		}
		out = append(out, sh)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Team < out[j].Team })
	return out
}

// Usage windows: at most MaxUsagePeriods periods, steps of whole minutes
// (the ledger's bucket), a window of at most MaxUsageWindow.
const (
	MaxUsagePeriods   = 2000
	MaxUsageWindow    = 400 * 24 * time.Hour
	DefaultUsageRange = 24 * time.Hour
)

var usageParams = []QueryParam{{Name: "by"}, {Name: "from"}, {Name: "to"}, {Name: "step"}}

// ParseUsageQuery reads by, from, to and step (now: the default end). It
// returns the field at fault with the error.
func ParseUsageQuery(v url.Values, now time.Time) (store.UsageQuery, string, error) {
	q := store.UsageQuery{By: store.UsageByTeam}
	switch by := v.Get("by"); {
	case by == "" || by == store.UsageByTeam:
	case by == store.UsageByJob:
		q.By = by
	case strings.HasPrefix(by, "label:"):
		q.By, q.Label = store.UsageByLabel, strings.TrimPrefix(by, "label:")
		if q.Label == "" || len(q.Label) > 63 {
			return q, "by", fmt.Errorf("by=label:KEY needs a label key of 1 to 63 characters")
		}
		if !scheduler.ValidLabelKey(q.Label) {
			return q, "by", fmt.Errorf("by=label:KEY: %q is not a label key: letters, digits, '.', '_', '/' or '-', starting and ending with a letter or digit", q.Label)
		}
	default:
		return q, "by", fmt.Errorf("by must be team, job or label:KEY (got %q)", by)
	}
	parseTime := func(field string) (time.Time, bool, error) {
		s := v.Get(field)
		if s == "" {
			return time.Time{}, false, nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return t, false, fmt.Errorf("%s must be an RFC 3339 time such as 2026-11-26T00:00:00Z (got %q)", field, s)
		}
		return t.UTC(), true, nil
	}
	to, haveTo, err := parseTime("to")
	if err != nil {
		return q, "to", err
	}
	if !haveTo {
		to = now.UTC()
	}
	from, haveFrom, err := parseTime("from")
	if err != nil {
		return q, "from", err
	}
	if !haveFrom {
		from = to.Add(-DefaultUsageRange)
	}
	// Whole minutes: the ledger's buckets.
	from = from.Truncate(time.Minute)
	if t := to.Truncate(time.Minute); t.Before(to) {
		to = t.Add(time.Minute)
	}
	if from.Year() < 1 {
		// JSON times cannot carry years before 1 either: a "to" in the
		// year 0 put the default "from" in the year -1.
		field := "from"
		if !haveFrom {
			field = "to"
		}
		return q, field, fmt.Errorf("%s must be after the year 0 (got %q)", field, v.Get(field))
	}
	if to.Year() > 9999 {
		// 9999-12-31T23:59:30Z rounds up into year 10000, which JSON
		// times cannot carry (the answer was a 200 without a body).
		return q, "to", fmt.Errorf("to must be before the year 10000 (got %q)", v.Get("to"))
	}
	if !from.Before(to) {
		return q, "from", fmt.Errorf("from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > MaxUsageWindow {
		return q, "from", fmt.Errorf("the window from %s to %s is longer than %d days; ask for less", from.Format(time.RFC3339), to.Format(time.RFC3339), int(MaxUsageWindow.Hours()/24))
	}
	q.From, q.To = from, to
	if s := v.Get("step"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			secs, nerr := strconv.ParseFloat(s, 64)
			if nerr != nil {
				return q, "step", fmt.Errorf("step must be a duration such as 15m or 1h, or seconds (got %q)", s)
			}
			d = time.Duration(secs * float64(time.Second))
		}
		if d < time.Minute || d%time.Minute != 0 {
			return q, "step", fmt.Errorf("step must be a whole number of minutes, at least 1m (got %s)", s)
		}
		if d > MaxUsageWindow {
			// Longer, the window plus a step overflowed the period count
			// (step=153722867m made it negative: an empty report).
			return q, "step", fmt.Errorf("step must be at most %d days (got %s)", int(MaxUsageWindow.Hours()/24), s)
		}
		if n := (to.Sub(from) + d - 1) / d; n > MaxUsagePeriods {
			return q, "step", fmt.Errorf("step %s cuts the window in %d periods; at most %d (use a larger step or a shorter window)", s, n, MaxUsagePeriods)
		}
		q.Step = d
	}
	return q, "", nil
}

func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	q, field, err := ParseUsageQuery(r.URL.Query(), s.cfg.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	rows, err := s.cfg.Usage.Usage(ctx, q)
	if err != nil {
		writeStoreError(w, r, "usage report", err)
		return
	}
	if rows == nil {
		rows = []store.UsageRow{}
	}
	step := q.Step
	if step == 0 {
		step = q.To.Sub(q.From)
	}
	by := q.By
	if by == store.UsageByLabel {
		by = "label:" + q.Label
	}
	if wantsCSV(r) {
		writeUsageCSV(w, by, rows)
		return
	}
	v := UsageView{By: by, From: q.From, To: q.To, StepSeconds: step.Seconds(), Rows: rows}
	if s.cfg.Budgets != nil && q.By == store.UsageByTeam {
		v.Budgets = s.cfg.Budgets()
	}
	if q.By == store.UsageByTeam {
		v.Shares = s.teamShares()
	}
	writeJSON(w, http.StatusOK, v)
}

// wantsCSV: the client's Accept lists text/csv before (or without)
// application/json.
func wantsCSV(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/csv":
			return true
		case "application/json":
			return false
		}
	}
	return false
}

// UsageCSVHeader is the CSV report's header row.
var UsageCSVHeader = []string{"from", "to", "group", "idle", "cost_usd", "cpu_hours", "memory_gib_hours",
	"jobs_finished", "jobs_failed", "jobs_killed", "jobs_rejected", "jobs_cancelled",
	"deadline_met", "deadline_missed", "deadline_met_pct", "started", "wait_mean_s", "wait_p90_s"}

func writeUsageCSV(w http.ResponseWriter, by string, rows []store.UsageRow) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="sparkpack-usage-by-`+strings.NewReplacer(":", "-", `"`, "", "/", "-").Replace(by)+`.csv"`)
	w.WriteHeader(http.StatusOK)
	_ = WriteUsageCSV(w, rows)
}

// WriteUsageCSV writes usage rows as CSV (UsageCSVHeader first): what
// GET /api/v1/usage answers to Accept: text/csv, and sparkpack usage --csv.
func WriteUsageCSV(w io.Writer, rows []store.UsageRow) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(UsageCSVHeader)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	opt := func(x *float64) string {
		if x == nil {
			return ""
		}
		return f(*x)
	}
	for _, r := range rows {
		_ = cw.Write([]string{r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), csvSafe(r.Group), strconv.FormatBool(r.Idle),
			f(r.CostUSD), f(r.CPUHours), f(r.MemoryGiBHours),
			strconv.Itoa(r.Jobs["FINISHED"]), strconv.Itoa(r.Jobs["FAILED"]), strconv.Itoa(r.Jobs["KILLED"]),
			strconv.Itoa(r.Jobs["REJECTED"]), strconv.Itoa(r.Jobs["CANCELLED"]),
			strconv.Itoa(r.DeadlineMet), strconv.Itoa(r.DeadlineMissed), opt(r.DeadlineMetPct),
			strconv.Itoa(r.Started), opt(r.WaitMeanSeconds), opt(r.WaitP90Seconds)})
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a spreadsheet from reading a group name (a label value a
// user chose) as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
