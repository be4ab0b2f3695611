// Command sparkpack-clusterload is the cluster-scale scenario of
// scripts/bench-cluster.sh (issue 20): it drives a running `sparkpack
// serve` whose Mesos master is the emulator with a large generated cluster,
// and prints the figures the cluster-scale targets name. It is a measuring
// tool, not part of the product binary.
//
//	sparkpack-clusterload --api http://127.0.0.1:8080 --agents 10000 \
//	    --serve-pid 123 --emulator-pid 456 [flags]
//
// The scenario: wait until serve sees every agent; submit --jobs small jobs
// at once; follow them until all have ended (or --timeout), reading
// GET /api/v1/cluster meanwhile and sampling the memory and cpu of serve
// and the emulator from /proc. Then it reads each job's events (reservations
// confirmed -> driver launched) and the placement histogram from /metrics.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkpack/sparkpack/integration/loadgen"
)

type options struct {
	api              string
	token            string
	agents           int
	jobs             int
	executors, cores int
	memMB            int
	estimate         float64
	timeout, window  time.Duration
	clusterEvery     time.Duration
	servePID, emuPID int
	jsonOut          bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sparkpack-clusterload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("sparkpack-clusterload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.api, "api", "http://127.0.0.1:8080", "sparkpack API URL")
	fs.StringVar(&o.token, "token", "", "bearer token, if serve requires one")
	fs.IntVar(&o.agents, "agents", 0, "agents the cluster has: wait until serve sees them all (0: do not wait for a count)")
	fs.IntVar(&o.jobs, "jobs", 51, "small jobs to submit at once")
	fs.IntVar(&o.executors, "executors", 2, "executors per job")
	fs.IntVar(&o.cores, "cores", 1, "cpus per executor")
	fs.IntVar(&o.memMB, "mem", 1024, "MiB per executor")
	fs.Float64Var(&o.estimate, "estimate", 20, "estimated (simulated) duration of each job in seconds")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "give up waiting for the jobs to end after this long")
	fs.DurationVar(&o.window, "window", 45*time.Second, "also count the jobs finished this long after submission (the issue's 45 s)")
	fs.DurationVar(&o.clusterEvery, "cluster-every", 250*time.Millisecond, "how often GET /api/v1/cluster is timed while the jobs run")
	fs.IntVar(&o.servePID, "serve-pid", 0, "pid of sparkpack serve (memory and cpu from /proc)")
	fs.IntVar(&o.emuPID, "emulator-pid", 0, "pid of the Mesos emulator (memory and cpu from /proc)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.jobs < 1 {
		return fmt.Errorf("--jobs must be at least 1")
	}
	say := func(format string, a ...any) {
		fmt.Fprintf(stderr, "sparkpack-clusterload: "+format+"\n", a...)
	}
	c := loadgen.NewClient(o.api, o.token, 16)
	r, err := scenario(ctx, c, o, say)
	if err != nil {
		return err
	}
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.print(stdout)
	return nil
}

type results struct {
	Agents          int     `json:"agents"`
	AgentsSeenSec   float64 `json:"agentsSeenSec"`
	Jobs            int     `json:"jobs"`
	Finished        int     `json:"finished"`
	FinishedWindow  int     `json:"finishedInWindow"`
	WindowSec       float64 `json:"windowSec"`
	NotEnded        int     `json:"notEnded"`
	Failed          int     `json:"failed"`
	AllEndedSec     float64 `json:"allEndedSec"`
	FirstRunningSec float64 `json:"firstRunningSec"`
	// Reservations confirmed (LAUNCHING) -> driver launched (the note
	// written when the ACCEPT with the LAUNCH returned).
	LaunchP50Ms float64 `json:"launchP50Ms"`
	LaunchP99Ms float64 `json:"launchP99Ms"`
	LaunchMaxMs float64 `json:"launchMaxMs"`
	LaunchCount int     `json:"launchCount"`
	// DroppedLaunches: launches the master dropped because their offer
	// had been rescinded meanwhile (launched again, uncounted).
	DroppedLaunches int     `json:"droppedLaunches"`
	ClusterP50Ms    float64 `json:"clusterP50Ms"`
	ClusterP99Ms    float64 `json:"clusterP99Ms"`
	ClusterMaxMs    float64 `json:"clusterMaxMs"`
	ClusterGets     int     `json:"clusterGets"`
	ClusterBytes    int     `json:"clusterBytes"`
	ServeRSSMiB     float64 `json:"serveRSSMiB"`
	ServeCPU        float64 `json:"serveCPU"` // cores, average over the run
	ServeCPUPeak    float64 `json:"serveCPUPeak"`
	EmuRSSMiB       float64 `json:"emulatorRSSMiB"`
	EmuCPU          float64 `json:"emulatorCPU"`
	PlaceP99Ms      float64 `json:"placementP99Ms"` // histogram bucket bound
	PlaceCount      float64 `json:"placementCount"`
	// From the placement events of /api/v1/events (each placement's own time).
	PlaceEvP50Ms float64 `json:"placementEventsP50Ms"`
	PlaceEvP99Ms float64 `json:"placementEventsP99Ms"`
	PlaceEvMaxMs float64 `json:"placementEventsMaxMs"`
	PlaceEvCount int     `json:"placementEvents"`
	RunSec       float64 `json:"runSec"`
	StatesAtWin  string  `json:"statesAtWindow"`
	StatesAtEnd  string  `json:"statesAtEnd"`
	// SlowestLaunch is the timeline of the job whose driver launch took
	// longest after its reservations were confirmed (for diagnosis).
	SlowestLaunch []string `json:"slowestLaunch,omitempty"`
	FirstNotEnded string   `json:"firstNotEnded,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

var terminal = map[string]bool{"FINISHED": true, "FAILED": true, "KILLED": true, "CANCELLED": true, "REJECTED": true}

type jobDetail struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Reason string `json:"waitingReason"`
	Events []struct {
		At     time.Time `json:"at"`
		To     string    `json:"to"`
		Reason string    `json:"reason"`
	} `json:"events"`
}

func scenario(ctx context.Context, c *loadgen.Client, o options, say func(string, ...any)) (results, error) {
	var r results
	r.Jobs, r.WindowSec = o.jobs, o.window.Seconds()

	// 1. serve sees the cluster.
	t0 := time.Now()
	for {
		n, err := clusterAgents(ctx, c)
		if err == nil && n > 0 && (o.agents == 0 || n >= o.agents) {
			r.Agents = n
			break
		}
		if time.Since(t0) > 3*time.Minute {
			return r, fmt.Errorf("serve shows %d agents at %s/api/v1/cluster after 3 minutes, want %d (is serve running with --mesos-master? %v)", n, c.API, o.agents, err)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	r.AgentsSeenSec = time.Since(t0).Seconds()
	say("serve sees %d agents (%.1f s)", r.Agents, r.AgentsSeenSec)

	// 2. samplers: /proc and GET /api/v1/cluster.
	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	serveS, emuS := &procSampler{pid: o.servePID}, &procSampler{pid: o.emuPID}
	var clusterLat []time.Duration
	var clusterBytes int
	var placeMu sync.Mutex
	var placements []time.Duration
	go func() { // owned by sctx: the stream ends with it
		_ = c.Events(sctx, func(name string, data []byte) {
			if name != "placement" {
				return
			}
			var p struct{ Elapsed time.Duration }
			if json.Unmarshal(data, &p) == nil {
				placeMu.Lock()
				placements = append(placements, p.Elapsed)
				placeMu.Unlock()
			}
		})
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		serveS.sample()
		emuS.sample()
		for {
			select {
			case <-sctx.Done():
				serveS.sample()
				emuS.sample()
				return
			case <-tick.C:
				serveS.sample()
				emuS.sample()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			t := time.Now()
			n, err := c.GetRaw(sctx, "/api/v1/cluster")
			if err == nil {
				clusterLat = append(clusterLat, time.Since(t))
				clusterBytes = n
			}
			select {
			case <-sctx.Done():
				return
			case <-time.After(o.clusterEvery):
			}
		}
	}()

	// 3. submit the jobs at once.
	ids := make([]string, o.jobs)
	start := time.Now()
	var swg sync.WaitGroup
	errs := make(chan error, o.jobs)
	for i := range ids {
		ids[i] = loadgen.NewID()
		swg.Add(1)
		go func(i int) {
			defer swg.Done()
			code, err := c.Submit(ctx, loadgen.Job(ids[i], fmt.Sprintf("small-%d", i), o.executors, o.cores, o.memMB, o.estimate))
			if err != nil {
				errs <- fmt.Errorf("submit job %d: %w", i, err)
			} else if code/100 != 2 {
				errs <- fmt.Errorf("submit job %d: HTTP %d", i, code)
			}
		}(i)
	}
	swg.Wait()
	close(errs)
	for err := range errs {
		stopSampling()
		wg.Wait()
		return r, err
	}
	say("%d jobs of %d x %d cpu / %d MiB submitted in %s", o.jobs, o.executors, o.cores, o.memMB, time.Since(start).Round(time.Millisecond))

	// 4. follow them.
	states := map[string]string{}
	endAt := map[string]time.Time{}
	lastSay := time.Now()
	windowTaken := false
	var firstRunning time.Time
	mine := map[string]bool{}
	for _, id := range ids {
		mine[id] = true
	}
	for {
		// One list call a round (the jobs of this run are the newest):
		// polling each job would load serve more than the scenario does.
		var list struct {
			Jobs []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"jobs"`
		}
		if err := c.GetJSON(ctx, fmt.Sprintf("/api/v1/jobs?limit=%d", min(1000, len(ids)+50)), &list); err != nil {
			say("listing jobs: %v", err)
		}
		for _, j := range list.Jobs {
			id := j.ID
			if !mine[id] || terminal[states[id]] {
				continue
			}
			states[id] = j.State
			if j.State == "RUNNING" && firstRunning.IsZero() {
				firstRunning = time.Now()
			}
			if terminal[j.State] {
				endAt[id] = time.Now()
				if firstRunning.IsZero() {
					firstRunning = time.Now()
				}
			}
		}
		ended := len(endAt)
		el := time.Since(start)
		if !windowTaken && el >= o.window {
			windowTaken = true
			r.FinishedWindow = count(states, "FINISHED")
			r.StatesAtWin = summary(states, ids)
		}
		if time.Since(lastSay) >= 5*time.Second || ended == len(ids) {
			lastSay = time.Now()
			say("%5.1f s: %d of %d ended; %s; serve %.0f MiB, emulator %.0f MiB", el.Seconds(), ended, len(ids), summary(states, ids), serveS.rssMiB(), emuS.rssMiB())
		}
		if ended == len(ids) {
			break
		}
		if el > o.timeout {
			say("timeout: %d jobs have not ended after %s", len(ids)-ended, o.timeout)
			break
		}
		select {
		case <-ctx.Done():
			stopSampling()
			wg.Wait()
			return r, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	r.RunSec = time.Since(start).Seconds()
	stopSampling()
	wg.Wait()
	if !windowTaken {
		for id := range states {
			if states[id] == "FINISHED" && endAt[id].Sub(start) <= o.window {
				r.FinishedWindow++
			}
		}
		r.StatesAtWin = summary(states, ids)
	}
	r.Finished = count(states, "FINISHED")
	r.Failed = len(endAt) - r.Finished
	r.NotEnded = len(ids) - len(endAt)
	r.StatesAtEnd = summary(states, ids)
	if len(endAt) == len(ids) {
		var last time.Time
		for _, t := range endAt {
			if t.After(last) {
				last = t
			}
		}
		r.AllEndedSec = last.Sub(start).Seconds()
	}
	if !firstRunning.IsZero() {
		r.FirstRunningSec = firstRunning.Sub(start).Seconds()
	}

	// 5. reservations confirmed -> driver launched, from the events.
	var launch []time.Duration
	var slowest time.Duration
	for _, id := range ids {
		var j jobDetail
		if err := c.GetJSON(ctx, "/api/v1/jobs/"+id, &j); err != nil {
			continue
		}
		if !terminal[j.State] && r.FirstNotEnded == "" {
			r.FirstNotEnded = fmt.Sprintf("%s %s (%s)", id, j.State, j.Reason)
		}
		var confirmed time.Time
		for _, e := range j.Events {
			switch {
			case e.To == "LAUNCHING" && strings.HasPrefix(e.Reason, "reservations confirmed"):
				confirmed = e.At
			case strings.Contains(e.Reason, "no longer valid"):
				r.DroppedLaunches++
			case !confirmed.IsZero() && strings.Contains(e.Reason, " launched on agent "):
				d := e.At.Sub(confirmed)
				launch = append(launch, d)
				confirmed = time.Time{}
				if d > slowest {
					slowest = d
					r.SlowestLaunch = r.SlowestLaunch[:0]
					for _, e := range j.Events {
						r.SlowestLaunch = append(r.SlowestLaunch, e.At.Format("15:04:05.000")+" "+e.To+" "+e.Reason)
					}
				}
			}
		}
	}
	r.LaunchCount = len(launch)
	r.LaunchP50Ms = ms(loadgen.Percentile(launch, 50))
	r.LaunchP99Ms = ms(loadgen.Percentile(launch, 99))
	r.LaunchMaxMs = ms(loadgen.Percentile(launch, 100))
	r.ClusterGets, r.ClusterBytes = len(clusterLat), clusterBytes
	r.ClusterP50Ms = ms(loadgen.Percentile(clusterLat, 50))
	r.ClusterP99Ms = ms(loadgen.Percentile(clusterLat, 99))
	r.ClusterMaxMs = ms(loadgen.Percentile(clusterLat, 100))
	r.ServeRSSMiB, r.ServeCPU, r.ServeCPUPeak = serveS.maxRSS/(1<<20), serveS.avgCPU(), serveS.peakCPU
	r.EmuRSSMiB, r.EmuCPU = emuS.maxRSS/(1<<20), emuS.avgCPU()
	placeMu.Lock()
	r.PlaceEvCount = len(placements)
	r.PlaceEvP50Ms = ms(loadgen.Percentile(placements, 50))
	r.PlaceEvP99Ms = ms(loadgen.Percentile(placements, 99))
	r.PlaceEvMaxMs = ms(loadgen.Percentile(placements, 100))
	placeMu.Unlock()
	if b, n, err := c.HistogramQuantile(ctx, "sparkpack_placement_seconds", "", 0.99); err == nil {
		r.PlaceP99Ms, r.PlaceCount = b*1000, n
	}
	return r, nil
}

func clusterAgents(ctx context.Context, c *loadgen.Client) (int, error) {
	var cl struct {
		Agents  []json.RawMessage `json:"agents"`
		Summary *struct {
			Agents int `json:"agents"`
		} `json:"summary"`
	}
	if err := c.GetJSON(ctx, "/api/v1/cluster?limit=1", &cl); err != nil {
		return 0, err
	}
	if cl.Summary != nil {
		return cl.Summary.Agents, nil
	}
	return len(cl.Agents), nil
}

func count(states map[string]string, s string) int {
	n := 0
	for _, v := range states {
		if v == s {
			n++
		}
	}
	return n
}

func summary(states map[string]string, ids []string) string {
	by := map[string]int{}
	for _, id := range ids {
		s := states[id]
		if s == "" {
			s = "?"
		}
		by[s]++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return strings.Join(parts, ", ")
}

// procSampler reads a process's resident memory and cpu time from /proc.
type procSampler struct {
	pid      int
	maxRSS   float64
	first    time.Time
	firstCPU float64
	last     time.Time
	lastCPU  float64
	peakCPU  float64 // highest cpu between two samples, in cores
}

const clockTicks = 100 // USER_HZ on Linux

func (p *procSampler) sample() {
	if p.pid <= 0 {
		return
	}
	now := time.Now()
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil && kb*1024 > p.maxRSS {
					p.maxRSS = kb * 1024
				}
			}
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	cpu := (ut + st) / clockTicks
	if p.first.IsZero() {
		p.first, p.firstCPU = now, cpu
	} else if d := now.Sub(p.last).Seconds(); d > 0.2 {
		if c := (cpu - p.lastCPU) / d; c > p.peakCPU {
			p.peakCPU = c
		}
	}
	p.last, p.lastCPU = now, cpu
}

func (p *procSampler) rssMiB() float64 { return p.maxRSS / (1 << 20) }

func (p *procSampler) avgCPU() float64 {
	d := p.last.Sub(p.first).Seconds()
	if d <= 0 {
		return 0
	}
	return (p.lastCPU - p.firstCPU) / d
}

func (r results) print(w io.Writer) {
	row := func(what, got, target string, ok bool) {
		mark := ""
		if target != "" {
			mark = "ok"
			if !ok {
				mark = "MISSED"
			}
		}
		fmt.Fprintf(w, "%-52s %-28s %-14s %s\n", what, got, target, mark)
	}
	fmt.Fprintf(w, "%-52s %-28s %-14s\n", "figure", "measured", "target")
	fmt.Fprintln(w, strings.Repeat("-", 100))
	row("agents", strconv.Itoa(r.Agents), "", true)
	row("jobs finished (all ended)", fmt.Sprintf("%d of %d", r.Finished, r.Jobs), "all", r.Finished == r.Jobs)
	row(fmt.Sprintf("  finished within %.0f s", r.WindowSec), fmt.Sprintf("%d (%s)", r.FinishedWindow, r.StatesAtWin), "", true)
	row("  submitted -> all ended (s)", fmt.Sprintf("%.1f", r.AllEndedSec), "", true)
	row("reservations confirmed -> driver launched p50/p99/max (ms)", fmt.Sprintf("%.0f / %.0f / %.0f (%d)", r.LaunchP50Ms, r.LaunchP99Ms, r.LaunchMaxMs, r.LaunchCount), "max < 2000", r.LaunchCount > 0 && r.LaunchMaxMs < 2000)
	row("  launches dropped (offer rescinded meanwhile)", strconv.Itoa(r.DroppedLaunches), "", true)
	row("GET /api/v1/cluster p50/p99 (ms)", fmt.Sprintf("%.1f / %.1f (%d, %d KiB)", r.ClusterP50Ms, r.ClusterP99Ms, r.ClusterGets, r.ClusterBytes/1024), "p99 < 200", r.ClusterGets > 0 && r.ClusterP99Ms < 200)
	row("serve RSS max (MiB)", fmt.Sprintf("%.0f", r.ServeRSSMiB), "< 300", r.ServeRSSMiB > 0 && r.ServeRSSMiB < 300)
	row("serve cpu average / peak 0.5 s (cores)", fmt.Sprintf("%.2f / %.2f", r.ServeCPU, r.ServeCPUPeak), "avg < 1", r.ServeCPU < 1)
	row("emulator RSS max (MiB)", fmt.Sprintf("%.0f", r.EmuRSSMiB), "< 2048", r.EmuRSSMiB > 0 && r.EmuRSSMiB < 2048)
	row("emulator cpu average (cores)", fmt.Sprintf("%.2f", r.EmuCPU), "", true)
	row("placement p50/p99/max (ms, from placement events)", fmt.Sprintf("%.2f / %.2f / %.2f (%d)", r.PlaceEvP50Ms, r.PlaceEvP99Ms, r.PlaceEvMaxMs, r.PlaceEvCount), "p99 < 10", r.PlaceEvCount > 0 && r.PlaceEvP99Ms < 10)
	row("  placement p99 (ms, /metrics histogram bucket bound)", fmt.Sprintf("%.2f (%.0f placements)", r.PlaceP99Ms, r.PlaceCount), "", true)
	if r.FirstNotEnded != "" {
		fmt.Fprintf(w, "first job not ended: %s\n", r.FirstNotEnded)
	}
}
