package chargeback

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseStatic(t *testing.T) {
	got, err := ParseStatic("analytics=50/day:reject, etl=$1000/month,(default)=0.5/day:hold")
	if err != nil {
		t.Fatal(err)
	}
	want := Static{"analytics": {USD: 50, Period: PerDay, Action: Reject}, "etl": {USD: 1000, Period: PerMonth, Action: Hold}, "": {USD: 0.5, Period: PerDay, Action: Hold}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %+v, want %+v", k, got[k], v)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{"analytics", "want team=dollars"},
		{"a=50/week", "period must be day or month"},
		{"a=-1/day", "amount"},
		{"a=NaN/day", "amount"},
		{"a=5/day:kill", "action must be hold or reject"},
		{"a=5/day,a=6/day", "two budgets"},
		{"a b=5/day", "not a team name"},
		{"-x=5/day", "not a team name"},
	} {
		if _, err := ParseStatic(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "budget") {
			t.Errorf("%q: %v, want an error saying %q", bad.in, err, bad.want)
		}
	}
}

func TestCheckAndPeriods(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	if got := PeriodStart(PerDay, now); !got.Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("day start %v", got)
	}
	if got := PeriodEnd(PerMonth, time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("month end %v", got)
	}
	sp := Spend{DayUSD: 52.13, MonthUSD: 400}
	cases := []struct {
		b        Budget
		over     bool
		left     float64
		inReason string
	}{
		{Budget{USD: 50, Period: PerDay, Action: Hold}, true, 0, "team analytics over its daily budget $50.00 (held until 2026-11-27 00:00 UTC)"},
		{Budget{USD: 60, Period: PerDay, Action: Hold}, false, 60 - 52.13, ""},
		{Budget{USD: 400, Period: PerMonth, Action: Reject}, true, 0, "over its monthly budget $400.00 (held until 2026-12-01 00:00 UTC)"},
		{Budget{USD: 1000, Period: PerMonth, Action: Hold}, false, 600, ""},
	}
	for _, c := range cases {
		v := Check("analytics", c.b, sp, now)
		if v.Over != c.over || v.LeftUSD-c.left > 1e-9 || c.left-v.LeftUSD > 1e-9 {
			t.Errorf("%+v: %+v", c.b, v)
		}
		if c.inReason != "" && !strings.Contains(v.Reason(), c.inReason) {
			t.Errorf("%+v: reason %q, want %q", c.b, v.Reason(), c.inReason)
		}
	}
	if r := Check("", Budget{USD: 1, Period: PerDay, Action: Reject}, Spend{DayUSD: 2}, now).Refusal(); !strings.Contains(r, "team (default) is over its daily budget $1.00: it spent $2.00") {
		t.Errorf("refusal %q", r)
	}
}

type fakeSpend map[string]Spend

func (f *fakeSpend) TeamSpend(context.Context, time.Time, time.Time) (map[string]Spend, error) {
	return *f, nil
}

func TestTracker(t *testing.T) {
	spend := &fakeSpend{"a": {DayUSD: 10}, "b": {DayUSD: 10}, "c": {DayUSD: 1}}
	changes := 0
	tr := &Tracker{Source: spend, OnChange: func() { changes++ },
		Budgets: Static{"a": {USD: 5, Period: PerDay, Action: Hold}, "b": {USD: 5, Period: PerDay, Action: Reject}, "c": {USD: 5, Period: PerDay, Action: Hold}},
		Now:     func() time.Time { return time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC) }}
	if err := tr.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	held := tr.HeldTeams()
	if len(held) != 2 || !strings.Contains(held["a"], "team a over its daily budget $5.00") || held["b"] == "" {
		t.Fatalf("held %v; want a and b", held)
	}
	if _, ok := tr.Refusal("a"); ok {
		t.Error("a hold budget refuses new jobs")
	}
	if v, ok := tr.Refusal("b"); !ok || v.SpentUSD != 10 {
		t.Errorf("b's reject budget: %+v %v", v, ok)
	}
	if changes != 1 {
		t.Errorf("%d change notes, want 1", changes)
	}
	// Spending on while held changes no reason: no note.
	(*spend)["a"] = Spend{DayUSD: 11}
	tr.Refresh(context.Background())
	if changes != 1 {
		t.Errorf("a held team spending on gave a change note")
	}
	// A new day (no spend yet) releases everyone.
	*spend = fakeSpend{}
	tr.Refresh(context.Background())
	if len(tr.HeldTeams()) != 0 || changes != 2 {
		t.Errorf("held %v after the period ended, %d notes", tr.HeldTeams(), changes)
	}
	if vs := tr.Verdicts(); len(vs) != 3 || vs[0].Team != "a" || vs[0].LeftUSD != 5 {
		t.Errorf("verdicts %+v", vs)
	}
}
