package teams

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, file string
		wantErr    string // with the line, e.g. "line 2: ..."
		check      func(t *testing.T, c *Config)
	}{
		{name: "empty file: no team", file: "# nothing yet\n\n", check: func(t *testing.T, c *Config) {
			if !c.Empty() || c.Team("x") != Default("x") {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "every setting", file: "# teams\nanalytics weight=2 guaranteed-cpus=16 guaranteed-memory=64g max-cpus=48 max-memory=192GiB max-waiting=100 max-deadline=20 budget=$500/day budget-action=reject # the BI team\n",
			check: func(t *testing.T, c *Config) {
				a := c.Team("analytics")
				want := Team{Name: "analytics", Line: 2, Weight: 2, GuaranteedCPUs: 16, GuaranteedMemMB: 65536, MaxCPUs: 48, MaxMemMB: 196608,
					MaxWaiting: 100, MaxDeadline: 20}
				if a.Budget == nil || *a.Budget != (Budget{USD: 500, Period: PerDay, Action: Reject}) {
					t.Fatalf("budget %+v", a.Budget)
				}
				a.Budget = nil
				if a != want {
					t.Fatalf("got %+v\nwant %+v", a, want)
				}
			}},
		{name: "defaults and units", file: "ml max-memory=512m budget=12000usd/month\netl guaranteed-memory=1t\nbi guaranteed-memory=2048",
			check: func(t *testing.T, c *Config) {
				ml := c.Team("ml")
				if ml.Weight != 1 || ml.MaxMemMB != 512 || ml.Budget.Action != Hold || ml.Budget.Period != PerMonth || ml.Budget.USD != 12000 {
					t.Fatalf("ml %+v %+v", ml, ml.Budget)
				}
				if c.Team("etl").GuaranteedMemMB != 1024*1024 || c.Team("bi").GuaranteedMemMB != 2048 {
					t.Fatalf("memory units: %+v", c.Teams)
				}
				if !c.Listed("ml") || c.Listed("other") || c.Team("other") != Default("other") {
					t.Fatal("unlisted teams get the defaults")
				}
			}},
		{name: "unknown key", file: "a weight=1\nb max-gpus=3", wantErr: `line 2: team b: unknown setting "max-gpus"`},
		{name: "negative quota", file: "\n\na max-cpus=-4", wantErr: "line 3: team a: max-cpus=-4: must not be negative"},
		{name: "negative guarantee", file: "a guaranteed-memory=-1g", wantErr: "line 1: team a: guaranteed-memory=-1g: must not be negative"},
		{name: "zero max", file: "a max-waiting=0", wantErr: "line 1: team a: max-waiting=0: must be at least 1"},
		{name: "zero weight", file: "a weight=0", wantErr: "line 1: team a: weight=0: must be from 0.001 to 1000"},
		{name: "tiny weight", file: "a weight=1e-320", wantErr: "line 1: team a: weight=1e-320: must be from 0.001 to 1000"},
		{name: "huge weight", file: "a weight=1001", wantErr: "line 1: team a: weight=1001: must be from 0.001 to 1000"},
		{name: "not a number", file: "a max-cpus=lots", wantErr: "line 1: team a: max-cpus=lots: not a number"},
		{name: "infinite", file: "a weight=Inf", wantErr: "line 1: team a: weight=Inf: not a number"},
		{name: "duplicate team", file: "a weight=1\n# b\na weight=2", wantErr: `line 3: team "a" is configured on line 1 too`},
		{name: "duplicate key", file: "a weight=1 weight=2", wantErr: "line 1: team a: weight is set twice"},
		{name: "guarantee above max", file: "a guaranteed-cpus=10 max-cpus=8", wantErr: "line 1: team a: guaranteed-cpus 10 is more than max-cpus 8"},
		{name: "bad budget", file: "a budget=500/week", wantErr: "line 1: team a: budget=500/week: write dollars per day or per month"},
		{name: "action without budget", file: "a budget-action=reject", wantErr: "line 1: team a: budget-action without a budget"},
		{name: "bad action", file: "a budget=5/day budget-action=kill", wantErr: "line 1: team a: budget-action=kill: use hold or reject"},
		{name: "not key=value", file: "a weight", wantErr: `line 1: team a: "weight" is not a key=value setting`},
		{name: "no name", file: "weight=2", wantErr: "line 1: a line starts with the team's name"},
		{name: "bad name", file: "ana/lytics weight=2", wantErr: `line 1: team name "ana/lytics"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse(strings.NewReader(c.file))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}

func TestCheckCapacity(t *testing.T) {
	c, err := Parse(strings.NewReader("a guaranteed-cpus=20 guaranteed-memory=40g\nb guaranteed-cpus=10\nc guaranteed-memory=100g"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cpus, memMB float64
		wantErr     string
	}{
		{64, 200 * 1024, ""},
		{30, 140 * 1024, ""},
		{16, 1e9, "line 1: team a: guaranteed-cpus 20 is more than the cluster's 16 cpus"},
		{25, 1e9, "line 2: team b: the guarantees add up to 30 cpus"},
		{64, 120 * 1024, "line 3: team c: the guarantees add up to 143360 MiB"},
		{64, 90 * 1024, "line 3: team c: guaranteed-memory 102400 MiB is more than the cluster's"},
	} {
		err := c.CheckCapacity(tc.cpus, tc.memMB)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("capacity %g cpus %g MiB: err %v, want %q", tc.cpus, tc.memMB, err, tc.wantErr)
		}
	}
}
