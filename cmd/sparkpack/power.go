package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/warmlive"
	"github.com/sparkpack/sparkpack/warmpool"
)

// powerConfig is power management's part of serve's flags.
type powerConfig struct {
	offAfter         time.Duration
	minWarmCPUs      float64
	onTimeout        time.Duration
	provider         string
	execProgram      string
	execArgs         []string
	execTimeout      time.Duration
	webhookURL       string
	webhookTokenFile string
	emulatorURL      string
	selector         string
	tick             time.Duration
	// bootTime: boot-aware placement (scheduler/boot.go) and the live
	// warm pool (warmpool.go).
	bootTime      time.Duration
	missCostUSD   float64
	forecastEvery time.Duration
	// noWarmPool (--power-warm-pool=false): power management without the
	// warm pool; idle agents power off after offAfter, nothing is kept
	// warm or powered on ahead, the forecast is still shown.
	noWarmPool bool
}

// powerFlags adds the --power-* flags.
func powerFlags(fs *flag.FlagSet, c *powerConfig) {
	fs.DurationVar(&c.offAfter, "power-off-after", envDuration("SPARKPACK_POWER_OFF_AFTER", 0), withEnv("power management: an agent idle this long (no task and no reservation of anyone) is deactivated in Mesos and powered off; 0 (the default) turns power management off", "SPARKPACK_POWER_OFF_AFTER"))
	fs.Float64Var(&c.minWarmCPUs, "power-min-warm-cpus", envFloat("SPARKPACK_POWER_MIN_WARM_CPUS", 0), withEnv("never power off an agent if the cpus of the agents left on would drop below this", "SPARKPACK_POWER_MIN_WARM_CPUS"))
	fs.DurationVar(&c.onTimeout, "power-on-timeout", envDuration("SPARKPACK_POWER_ON_TIMEOUT", 5*time.Minute), withEnv("how long a plan waits for a powered-on agent to register with Mesos before it is placed again without it", "SPARKPACK_POWER_ON_TIMEOUT"))
	fs.StringVar(&c.provider, "power-provider", envDefault("SPARKPACK_POWER_PROVIDER", ""), withEnv("what powers agents off and on: exec (--power-exec), webhook (--power-webhook-url) or emulator (the Mesos emulator's /sim API)", "SPARKPACK_POWER_PROVIDER"))
	fs.StringVar(&c.execProgram, "power-exec", envDefault("SPARKPACK_POWER_EXEC", ""), withEnv("program the exec provider runs as: PROGRAM [--power-exec-arg ...] on|off AGENT_ID HOSTNAME (an argument vector, no shell; attributes in SPARKPACK_AGENT_ATTR_*)", "SPARKPACK_POWER_EXEC"))
	fs.Func("power-exec-arg", "an argument placed before the action for --power-exec (repeat for several)", func(s string) error {
		c.execArgs = append(c.execArgs, s)
		return nil
	})
	fs.DurationVar(&c.execTimeout, "power-exec-timeout", envDuration("SPARKPACK_POWER_EXEC_TIMEOUT", 2*time.Minute), withEnv("time limit of one run of --power-exec", "SPARKPACK_POWER_EXEC_TIMEOUT"))
	fs.StringVar(&c.webhookURL, "power-webhook-url", envDefault("SPARKPACK_POWER_WEBHOOK_URL", ""), withEnv(`URL the webhook provider POSTs {"action":"on"|"off","agent":{...}} to`, "SPARKPACK_POWER_WEBHOOK_URL"))
	fs.StringVar(&c.webhookTokenFile, "power-webhook-token-file", envDefault("SPARKPACK_POWER_WEBHOOK_TOKEN_FILE", ""), withEnv("file holding the webhook's bearer token", "SPARKPACK_POWER_WEBHOOK_TOKEN_FILE"))
	fs.StringVar(&c.emulatorURL, "power-emulator-url", envDefault("SPARKPACK_POWER_EMULATOR_URL", ""), withEnv("the Mesos emulator's URL for the emulator provider (default: --mesos-master)", "SPARKPACK_POWER_EMULATOR_URL"))
	fs.StringVar(&c.selector, "power-selector", envDefault("SPARKPACK_POWER_SELECTOR", ""), withEnv("only agents matching every term are powered off, e.g. location=cloud,hostname=worker-* (others, such as on-premises agents, are never touched)", "SPARKPACK_POWER_SELECTOR"))
	fs.DurationVar(&c.bootTime, "power-boot-time", envDuration("SPARKPACK_POWER_BOOT_TIME", warmlive.DefaultBootTime), withEnv("how long an agent takes from power-on to registering with Mesos: placement counts it (a job waits for an agent booting, shares one boot, or waits for warm capacity when its deadline leaves the slack) and the warm pool keeps warm (or powers on ahead) what the forecast needs within it (docs/power.md)", "SPARKPACK_POWER_BOOT_TIME"))
	fs.Float64Var(&c.missCostUSD, "power-miss-cost-usd", envFloat("SPARKPACK_POWER_MISS_COST_USD", warmpool.DefaultMissCostUSD), withEnv("the warm pool's price of one missed deadline in dollars: an idle agent is kept warm while the expected misses it avoids, at this price, exceed its bill (docs/power.md)", "SPARKPACK_POWER_MISS_COST_USD"))
	fs.DurationVar(&c.forecastEvery, "power-forecast-every", envDuration("SPARKPACK_POWER_FORECAST_EVERY", warmlive.DefaultEvery), withEnv("how often the leader refits the forecast of arrivals from the job history and decides the warm pool", "SPARKPACK_POWER_FORECAST_EVERY"))
	fs.BoolFunc("power-warm-pool", withEnv("with power management, keep warm (and power on ahead) what the forecast needs within a boot time (default true; false: idle agents power off after --power-off-after whatever the forecast, as before issue 31)", "SPARKPACK_POWER_WARM_POOL"), func(v string) error {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.noWarmPool = !on
		return nil
	})
	if v := os.Getenv("SPARKPACK_POWER_WARM_POOL"); v != "" {
		if on, err := strconv.ParseBool(v); err == nil {
			c.noWarmPool = !on
		}
	}
	fs.DurationVar(&c.tick, "power-tick", envDuration("SPARKPACK_POWER_TICK", 2*time.Second), withEnv("how often power management looks at the agents", "SPARKPACK_POWER_TICK"))
}

func envFloat(env string, def float64) float64 {
	if v := os.Getenv(env); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return def
}

// unused names the power flags given while power management is off
// (--power-off-after 0): they are accepted and do nothing, which an
// operator who set a provider but forgot --power-off-after should hear.
func (c *powerConfig) unused() []string {
	if c.offAfter != 0 {
		return nil
	}
	var u []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--power-provider", c.provider != ""},
		{"--power-exec", c.execProgram != ""},
		{"--power-exec-arg", len(c.execArgs) > 0},
		{"--power-webhook-url", c.webhookURL != ""},
		{"--power-webhook-token-file", c.webhookTokenFile != ""},
		{"--power-emulator-url", c.emulatorURL != ""},
		{"--power-selector", c.selector != ""},
		{"--power-min-warm-cpus", c.minWarmCPUs != 0},
	} {
		if f.set {
			u = append(u, f.name)
		}
	}
	return u
}

// validate checks the flags when power management is on.
func (c *powerConfig) validate() error {
	if c.offAfter < 0 {
		return fmt.Errorf("--power-off-after must be >= 0 (0 turns power management off)")
	}
	if c.offAfter == 0 {
		return nil
	}
	if !(c.minWarmCPUs >= 0) || math.IsInf(c.minWarmCPUs, 0) {
		// NaN passed "< 0" and kept no cpus warm, as 0 does.
		return fmt.Errorf("--power-min-warm-cpus must be a number >= 0, got %g", c.minWarmCPUs)
	}
	if c.onTimeout <= 0 || c.tick <= 0 {
		return fmt.Errorf("--power-on-timeout and --power-tick must be positive")
	}
	if c.bootTime <= 0 || c.forecastEvery <= 0 {
		return fmt.Errorf("--power-boot-time and --power-forecast-every must be positive")
	}
	if !(c.missCostUSD >= 0) || math.IsInf(c.missCostUSD, 0) {
		return fmt.Errorf("--power-miss-cost-usd must be a number >= 0 (0: the default, $%g)", warmpool.DefaultMissCostUSD)
	}
	if _, err := power.ParseSelector(c.selector); err != nil {
		return fmt.Errorf("--power-selector: %w", err)
	}
	switch c.provider {
	case "exec":
		if c.execProgram == "" {
			return fmt.Errorf("--power-provider exec needs --power-exec PROGRAM")
		}
	case "webhook":
		if c.webhookURL == "" {
			return fmt.Errorf("--power-provider webhook needs --power-webhook-url")
		}
	case "emulator":
	case "":
		return fmt.Errorf("--power-off-after is set: choose --power-provider exec, webhook or emulator")
	default:
		return fmt.Errorf("--power-provider %q is unknown: use exec, webhook or emulator", c.provider)
	}
	return nil
}

// provider builds the configured provider; a missing program or a bad URL
// is an error at start.
func (c *powerConfig) newProvider(mesosMaster string, log logrus.FieldLogger) (power.Provider, error) {
	switch c.provider {
	case "exec":
		return power.NewExecProvider(c.execProgram, c.execArgs, c.execTimeout, log)
	case "webhook":
		token := ""
		if c.webhookTokenFile != "" {
			b, err := os.ReadFile(c.webhookTokenFile)
			if err != nil {
				return nil, fmt.Errorf("--power-webhook-token-file: %w", err)
			}
			token = strings.TrimSpace(string(b))
		}
		return power.NewWebhookProvider(c.webhookURL, token, 30*time.Second)
	case "emulator":
		u := c.emulatorURL
		if u == "" {
			u = mesosMaster
			if strings.Contains(u, ",") || strings.HasPrefix(u, "zk://") {
				return nil, fmt.Errorf("--power-provider emulator with --mesos-master %q: set --power-emulator-url to the emulator's URL", u)
			}
			if !strings.Contains(u, "://") {
				u = "http://" + u
			}
		}
		return power.NewEmulatorProvider(u)
	}
	return nil, fmt.Errorf("--power-provider %q is unknown", c.provider)
}

// startPower builds power management (nil when it is off); onChange
// hears of every agent's power state change.
func startPower(ctx context.Context, c powerConfig, mesosMaster string, refresh time.Duration, op *offers.Operator, st power.Store, log *logrus.Logger, guard func() error, onChange func(power.Record)) (*power.Manager, error) {
	if c.offAfter <= 0 {
		return nil, nil
	}
	plog := log.WithField("component", "power")
	prov, err := c.newProvider(mesosMaster, plog)
	if err != nil {
		return nil, err
	}
	sel, _ := power.ParseSelector(c.selector)
	pm, err := power.NewManager(power.Config{OffAfter: c.offAfter, MinWarmCPUs: c.minWarmCPUs, PowerOnTimeout: c.onTimeout,
		BootTime: c.bootTime, Selector: sel, Provider: prov, Log: plog, Guard: guard, OnChange: onChange,
		// A view older than a few missed refreshes is stale even without
		// an error (a GET_AGENTS that hangs): no power-off on it.
		StaleAfter: max(power.DefaultStaleAfter, 5*refresh)}, st, op)
	if err != nil {
		return nil, err
	}
	if err := pm.Load(ctx); err != nil {
		return nil, err
	}
	plog.WithFields(logrus.Fields{"off_after": c.offAfter.String(), "min_warm_cpus": c.minWarmCPUs, "boot_time": c.bootTime.String(), "provider": prov.Name(),
		"selector": sel.String()}).Info("power management is on: idle agents are deactivated in Mesos and powered off")
	return pm, nil
}

// powerAgents converts the adapter's view of the agents for power management.
func powerAgents(in []offers.AgentStatus) []power.Agent {
	out := make([]power.Agent, len(in))
	for i, a := range in {
		out[i] = power.Agent{ID: a.ID, Hostname: a.Hostname, Attributes: a.Attributes, CPUs: a.CPUs, MemMB: a.MemMB,
			PricePerHour: a.PricePerHour, Listed: true, Active: a.Active, Deactivated: a.Deactivated, Busy: a.Busy,
			RegisteredAt: a.RegisteredAt}
	}
	return out
}

// billSource reads the emulator's bill (GET /sim/bill) for the cost view,
// at most every few seconds; it is nil on a real cluster.
type billSource struct {
	url    string
	client *http.Client
	// scale puts the bill, in simulated time, on sparkpack's clock (wall
	// time: the meter's and the jobs' costs): 1/--sim-speed in the demo;
	// 0 means 1. Unscaled, the demo at --sim-speed 60 showed a meter of
	// $0.54 next to a bill of $43.75 for the same agents.
	scale float64
	mu    sync.Mutex
	at    time.Time
	last  *emulatorBill
}

type emulatorBill struct {
	TotalUSD    float64 `json:"totalUSD"`
	AlwaysOnUSD float64 `json:"alwaysOnUSD"`
	Seconds     float64 `json:"seconds"`
}

func (b *billSource) get(ctx context.Context) *emulatorBill {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.at) < 2*time.Second {
		return b.last
	}
	b.at = time.Now()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url, nil)
	if err != nil {
		return b.last
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return b.last
	}
	defer resp.Body.Close()
	var eb emulatorBill
	if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&eb) == nil {
		if b.scale > 0 {
			eb.TotalUSD, eb.AlwaysOnUSD, eb.Seconds = eb.TotalUSD*b.scale, eb.AlwaysOnUSD*b.scale, eb.Seconds*b.scale
		}
		b.last = &eb
	}
	return b.last
}
