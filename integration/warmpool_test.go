package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/store"
)

// warmCluster: one cheap 4-cpu agent and two dear ones.
func warmCluster() clusterspec.Cluster {
	c := clusterspec.Cluster{Name: "warm3"}
	for _, a := range []struct {
		id    string
		cpus  float64
		price float64
	}{{"w-cheap", 4, 0.20}, {"w-dear1", 4, 4}, {"w-dear2", 8, 8}} {
		c.Agents = append(c.Agents, clusterspec.Agent{ID: a.id, Hostname: "warm-" + a.id[2:], CPUs: a.cpus, MemMB: 4096 * a.cpus,
			PricePerHour: a.price, InstanceType: "m.test", Location: "cloud"})
	}
	return c
}

// recurringBody is the recurring deadline job: one executor of 1 cpu
// (and its driver), 3 s, due 15 s after its submission: its slack cannot
// absorb the agents' 20 s boot.
const recurringBody = `{"name":"recurring","app":{"appResource":"local:///opt/spark/examples/jars/spark-examples.jar","mainClass":"org.apache.spark.examples.SparkPi","args":["10"]},` +
	`"executors":1,"executorCores":1,"executorMemoryMB":1024,"estimatedDurationSeconds":3,"deadline":15}`

// seedRecurring stores the history of the recurring job: every period
// over the last hour, finished.
func seedRecurring(t *testing.T, dbURL string, period time.Duration) {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), dbURL, store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := int(time.Hour / period)
	_, err = st.DB().ExecContext(context.Background(), `
		INSERT INTO jobs (id, name, spec, fingerprint, state, submitted_at, started_at, finished_at, deadline_at, updated_at)
		SELECT gen_random_uuid(), 'recurring', $1::jsonb, 'seed-' || g, 'FINISHED', at, at + interval '1 second',
		       at + interval '4 seconds', at + interval '15 seconds', now()
		FROM generate_series(1, $2::int) g, LATERAL (SELECT now() - g * $3::float8 * interval '1 second' AS at) s`,
		recurringBody, n, period.Seconds())
	if err != nil {
		t.Fatal(err)
	}
}

type forecastView struct {
	Model struct {
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
		Jobs   int    `json:"jobs"`
	} `json:"model"`
	Steps []struct {
		Jobs struct {
			P50 float64 `json:"p50"`
		} `json:"jobs"`
		Actual *struct {
			Jobs int `json:"jobs"`
		} `json:"actual"`
	} `json:"steps"`
	WarmPool *struct {
		Reason   string `json:"reason"`
		Fallback string `json:"fallback"`
		KeepOn   []struct {
			AgentID string `json:"agentId"`
			Reason  string `json:"reason"`
		} `json:"keepOn"`
	} `json:"warmPool"`
}

func agentInfo(m *mesossim.Master, id string) mesossim.AgentInfo {
	for _, a := range m.Agents() {
		if a.ID == id {
			return a
		}
	}
	return mesossim.AgentInfo{}
}

// TestE2EWarmPool: from a stored history of a deadline job every 20 s
// (slack 12 s, boot 20 s), the leader's warm pool keeps the cheap agent
// on past its idle timeout while the dear ones power off; the recurring
// job then finds the cheap agent on each time (no agent boots, none goes
// off), and the emulator's bill is below always-on. GET /api/v1/forecast
// shows the forecast and the decision; a bad parameter is a 400 naming
// it.
func TestE2EWarmPool(t *testing.T) {
	const period = 20 * time.Second
	db := e2eDB(t)
	seedRecurring(t, db, period)
	// Real time (TimeScale 1): the boot time, the jobs and their
	// deadlines are all wall time, as sparkpack sees them.
	emu := startEmulator(t, mesossim.Config{Cluster: warmCluster(), TimeScale: 1, BootTime: 20 * time.Second, UnreachableAfter: 2 * time.Second})
	// The miss price: the cheap agent saves ~0.9 expected misses over a
	// boot time for $0.001, the next one ~0.1 for $0.02: at $0.05 a miss
	// the first is worth 40 times its bill, the second a fifth of it.
	sp := startSparkpack(t, emu.URL, db, "--policy", "exact", "--power-off-after", "3s", "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "60s", "--power-boot-time", "20s", "--power-forecast-every", "2s",
		"--power-miss-cost-usd", "0.05")

	var fv forecastView
	waitUntil(t, 120*time.Second, "the dear agents off and the cheap one kept warm", func() bool {
		c, d1, d2 := agentInfo(emu.Master, "w-cheap"), agentInfo(emu.Master, "w-dear1"), agentInfo(emu.Master, "w-dear2")
		if c.PoweredOff || c.Booting || !d1.PoweredOff || !d2.PoweredOff || d1.Booting || d2.Booting {
			return false
		}
		fv = forecastView{}
		getJSON(t, sp.API+"/api/v1/forecast?horizon=10m&step=1m", &fv)
		return fv.WarmPool != nil && len(fv.WarmPool.KeepOn) > 0 && fv.WarmPool.KeepOn[0].AgentID == "w-cheap"
	})
	if !fv.Model.OK || fv.Model.Jobs < 100 || len(fv.Steps) != 20 {
		t.Fatalf("forecast %+v", fv)
	}
	t.Logf("warm pool: %s; cheap agent: %s", fv.WarmPool.Reason, fv.WarmPool.KeepOn[0].Reason)
	// The metrics say the same: cpus kept warm, a forecast of about 180
	// jobs an hour (one every 20 s), nothing powered on ahead (the cheap
	// agent never went off).
	m := scrape(t, sp.API)
	t.Logf("metrics: warm cpus %g, forecast arrivals p50 %g", sum(m, "sparkpack_warm_pool_cpus"), sum(m, "sparkpack_forecast_arrivals_p50"))
	if w, p50, ahead := sum(m, "sparkpack_warm_pool_cpus"), sum(m, "sparkpack_forecast_arrivals_p50"), sum(m, "sparkpack_warm_pool_powered_on_ahead_total"); w <= 0 || p50 < 90 || p50 > 360 || ahead != 0 || m["#family sparkpack_warm_pool_powered_on_ahead_total"] != 1 {
		t.Errorf("metrics: warm cpus %g, forecast arrivals p50 %g, powered on ahead %g; want > 0, about 180, 0", w, p50, ahead)
	}
	past := 0
	for _, s := range fv.Steps {
		if s.Actual != nil {
			past += s.Actual.Jobs
		}
	}
	if past < 20 {
		t.Errorf("the past ten minutes show %d actual arrivals; want about 30", past)
	}

	watch := watchPower(emu.Master)
	for round := 0; round < 3; round++ {
		next := time.Now().Add(period)
		var body map[string]any
		if err := json.Unmarshal([]byte(recurringBody), &body); err != nil {
			t.Fatal(err)
		}
		id := submit(t, sp.API, body)
		v := waitState(t, sp.API, id, 90*time.Second, "FINISHED", "FAILED", "KILLED")
		if v.State != "FINISHED" || len(v.Placement) != 1 || v.Placement[0].AgentID != "w-cheap" {
			t.Fatalf("round %d: job %s ended %s on %+v (%s)", round, id, v.State, v.Placement, v.WaitingReason)
		}
		for _, a := range []string{"w-dear1", "w-dear2"} {
			if i := agentInfo(emu.Master, a); !i.PoweredOff || i.Booting {
				t.Fatalf("round %d: %s was powered on (%+v)", round, a, i)
			}
		}
		time.Sleep(time.Until(next))
	}
	violations, offs := watch.finish()
	if len(violations) > 0 || len(offs) > 0 {
		t.Fatalf("during the rounds agents went off %v (violations %v): the cheap agent must stay warm, the dear ones off", offs, violations)
	}
	b := emulatorBill(t, emu.URL)
	t.Logf("emulator bill $%.4f against $%.4f always on (%.0f%%) over %.0f simulated s", b.TotalUSD, b.AlwaysOnUSD, 100*b.TotalUSD/b.AlwaysOnUSD, b.Seconds)
	if !(b.TotalUSD < b.AlwaysOnUSD) {
		t.Fatalf("bill $%.4f is not below always-on $%.4f", b.TotalUSD, b.AlwaysOnUSD)
	}

	resp, err := http.Get(sp.API + "/api/v1/forecast?step=10s")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Field string `json:"field"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Field != "step" {
		t.Fatalf("step=10s: %d %+v %v; want 400 naming step", resp.StatusCode, e, err)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
