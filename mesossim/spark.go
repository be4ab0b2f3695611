package mesossim

// Simulated Spark. This emulates the publicly documented behaviour of Spark
// 3.x's coarse-grained Mesos backend (docs/running-on-mesos.md); it is not
// Spark code. When a launched task's command is a spark-submit with
// --conf spark.mesos.role=R, the emulator plays the Spark driver:
//
//   - once the driver task is running, a framework registers with
//     FrameworkInfo.role R (no MULTI_ROLE, no RESERVATION_REFINEMENT, so its
//     offers use the legacy reservation format, failover_timeout 0);
//   - it takes every offer made to R, reserved or not, and launches
//     executors of spark.executor.cores cpus and spark.executor.memory +
//     spark.mesos.executor.memoryOverhead (default max(384 MiB, 10%)) MiB,
//     round-robin over the offers of one OFFERS event (one executor per
//     offer per round) until spark.cores.max cores (rounded down to whole
//     executors) are acquired, taking an offer's resources in their order
//     (reservations come before unreserved cpus/mem in offers);
//     spark.mesos.constraints (attr:v1,v2;attr2:v; a scalar attribute must
//     be at least the value) filters agents;
//   - offers that miss the constraints are declined for
//     spark.mesos.rejectOfferDuration (default 120s), as are all offers
//     once spark.cores.max is reached; other unused offers are declined
//     without a filter (the master's default 5 s);
//   - a lost or failed executor gives its cores back and counts against
//     its agent (two failures and the agent gets no more executors); every
//     ended executor revives offers;
//   - when the driver task ends (its simulated duration has passed) the
//     executors are killed and the framework is torn down. The driver ends
//     TASK_FAILED when its environment has FAKESPARK_EXIT_CODE=N (N > 0),
//     as integration/realmesos/fakespark, the stand-in that runs on real
//     agents, exits with that status.
//
// This is what lets tests catch executors landing outside reservations:
// with unreserved resources offered to R, Spark happily uses them.

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// SparkConf is what the simulated driver takes from a spark-submit command.
type SparkConf struct {
	Role                string
	AppName             string
	CoresMax            float64 // 0 = unlimited
	ExecutorCores       float64 // 0 = all cpus of an offer (Spark's default on Mesos)
	ExecutorMemoryMB    float64
	MemoryOverheadMB    float64 // 0 = max(384, 10%)
	RejectOfferDuration time.Duration
	Constraints         map[string][]string
	// AppResource and MainClass are the application (its signature for
	// the performance truth, sparktruth.go); InputGB and Iterations the
	// data it reads (spark.sparkpack.sim.inputGB, default 1, and
	// spark.sparkpack.sim.iterations, default 1).
	AppResource, MainClass string
	InputGB                float64
	Iterations             int
}

type sparkJob struct {
	driver    *task
	conf      SparkConf
	fw        *framework
	executors map[*task]float64 // executor -> cores
	acquired  float64
	failures  map[string]int // agent id -> failed or lost executors
	nextID    int
	pending   []*scheduler.Event
	scheduled bool
	done      bool
	// Performance truth (sparktruth.go): the wait for executors is over;
	// the application's timed run has started.
	waitOver, started bool
}

// ParseSparkSubmit extracts the Spark settings the emulator models from a
// spark-submit command (argument vector or shell string). ok is false when
// the command is not a spark-submit with spark.mesos.role.
func ParseSparkSubmit(args []string) (SparkConf, bool) {
	idx := -1
	for i, a := range args {
		if strings.Contains(path.Base(a), "spark-submit") {
			idx = i
			break
		}
	}
	if idx < 0 {
		return SparkConf{}, false
	}
	// A command without a shell repeats its program as argv[0].
	for idx+1 < len(args) && strings.Contains(path.Base(args[idx+1]), "spark-submit") {
		idx++
	}
	conf := map[string]string{}
	rest := args[idx+1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		next := func() string {
			if i+1 < len(rest) {
				i++
				return rest[i]
			}
			return ""
		}
		switch {
		case a == "--conf" || a == "-c":
			kv := next()
			if k, v, ok := strings.Cut(kv, "="); ok {
				conf[k] = v
			}
		case strings.HasPrefix(a, "--conf="):
			if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--conf="), "="); ok {
				conf[k] = v
			}
		case a == "--executor-cores":
			conf["spark.executor.cores"] = next()
		case a == "--executor-memory":
			conf["spark.executor.memory"] = next()
		case a == "--total-executor-cores":
			conf["spark.cores.max"] = next()
		case a == "--name":
			conf["spark.app.name"] = next()
		case a == "--class":
			conf["--class"] = next()
		case sparkValueOption[a]:
			next()
		case !strings.HasPrefix(a, "-"):
			// The application; what follows is its own arguments.
			conf["--app"] = a
			i = len(rest)
		}
	}
	sc := SparkConf{Role: conf["spark.mesos.role"], AppName: conf["spark.app.name"]}
	if sc.Role == "" {
		return sc, false
	}
	if sc.AppName == "" {
		sc.AppName = "Spark"
	}
	sc.CoresMax, _ = strconv.ParseFloat(conf["spark.cores.max"], 64)
	sc.ExecutorCores, _ = strconv.ParseFloat(conf["spark.executor.cores"], 64)
	if sc.CoresMax > 0 && sc.ExecutorCores > 0 {
		// Spark rounds spark.cores.max down to whole executors.
		sc.CoresMax -= math.Mod(sc.CoresMax, sc.ExecutorCores)
	}
	sc.ExecutorMemoryMB = parseSparkMemMB(conf["spark.executor.memory"], 1024)
	if v, ok := conf["spark.mesos.executor.memoryOverhead"]; ok {
		sc.MemoryOverheadMB = parseSparkMemMB(v, 0)
	}
	if sc.MemoryOverheadMB <= 0 {
		sc.MemoryOverheadMB = math.Max(384, 0.10*sc.ExecutorMemoryMB)
	}
	sc.AppResource, sc.MainClass = conf["--app"], conf["--class"]
	sc.InputGB, sc.Iterations = 1, 1
	if f, err := strconv.ParseFloat(conf[SimInputGBConf], 64); err == nil && f > 0 && f <= 1e6 {
		sc.InputGB = f
	}
	if n, err := strconv.Atoi(conf[SimIterationsConf]); err == nil && n >= 1 && n <= 1e6 {
		sc.Iterations = n
	}
	sc.RejectOfferDuration = parseSparkDuration(conf["spark.mesos.rejectOfferDuration"], 120*time.Second)
	if c := conf["spark.mesos.constraints"]; c != "" {
		sc.Constraints = map[string][]string{}
		for _, part := range strings.Split(c, ";") {
			k, v, _ := strings.Cut(part, ":")
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			var vals []string
			if v != "" {
				vals = strings.Split(v, ",")
			}
			sc.Constraints[k] = vals
		}
	}
	return sc, true
}

// parseSparkMemMB parses Spark memory strings ("4g", "512m", "4096" = MiB).
func parseSparkMemMB(s string, def float64) float64 {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return def
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "gb") || strings.HasSuffix(s, "g"):
		mult = 1024
	case strings.HasSuffix(s, "tb") || strings.HasSuffix(s, "t"):
		mult = 1024 * 1024
	case strings.HasSuffix(s, "kb") || strings.HasSuffix(s, "k"):
		mult = 1.0 / 1024
	}
	s = strings.TrimRightFunc(s, unicode.IsLetter)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return def
	}
	return f * mult
}

// parseSparkDuration parses Spark time strings ("5s", "120s", "2min", "100ms"; plain numbers are seconds).
func parseSparkDuration(s string, def time.Duration) time.Duration {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return def
	}
	if d, err := time.ParseDuration(strings.Replace(s, "min", "m", 1)); err == nil {
		return d
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second))
	}
	return def
}

// shellWords splits a shell command line into words (quotes and
// backslashes handled; no expansion).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func commandWords(ci *mesos.CommandInfo) []string {
	if ci == nil {
		return nil
	}
	if ci.Shell == nil || *ci.Shell {
		return shellWords(ci.GetValue())
	}
	return append([]string{ci.GetValue()}, ci.Arguments...)
}

// sparkExitCode is the exit status a simulated driver ends with:
// $FAKESPARK_EXIT_CODE of its command's environment (0 when unset), as
// the stand-in for spark-submit on real agents does.
func sparkExitCode(ci *mesos.CommandInfo) int {
	if ci == nil || ci.Environment == nil {
		return 0
	}
	for _, v := range ci.Environment.Variables {
		if v.Name == "FAKESPARK_EXIT_CODE" {
			if n, err := strconv.Atoi(v.GetValue()); err == nil && n > 0 && n < 256 {
				return n
			}
		}
	}
	return 0
}

// sparkDriverFor returns a new simulated Spark job if t is a spark-submit.
func (m *Master) sparkDriverFor(t *task) *sparkJob {
	if m.cfg.DisableSpark || t.executor != nil || t.fw.spark != nil {
		return nil
	}
	conf, ok := ParseSparkSubmit(commandWords(t.info.Command))
	if !ok {
		return nil
	}
	job := &sparkJob{driver: t, conf: conf, executors: map[*task]float64{}, failures: map[string]int{}}
	m.sparkJobs[t] = job
	m.log.WithFields(logrus.Fields{"task": t.id, "role": conf.Role, "cores_max": conf.CoresMax,
		"executor_cores": conf.ExecutorCores, "executor_mem_mb": conf.ExecutorMemoryMB, "overhead_mb": conf.MemoryOverheadMB}).Info("simulated Spark driver launched")
	return job
}

// sparkDriverRunningLocked registers the job's framework shortly after the
// driver task starts running.
func (m *Master) sparkDriverRunningLocked(job *sparkJob) {
	m.afterLocked(m.cfg.SparkExecutorStartDelay, func() {
		if job.done || job.fw != nil || isTerminal(job.driver.actual) {
			return
		}
		role := job.conf.Role
		fw := &framework{id: m.newFrameworkID(), tasks: map[string]*task{}, offers: map[string]*offer{},
			suppressed: map[string]bool{}, registered: time.Now(), reregistered: time.Now(), spark: job}
		fo := 0.0
		fw.setInfo(mesos.FrameworkInfo{User: "root", Name: job.conf.AppName, Role: &role,
			ID: &mesos.FrameworkID{Value: fw.id}, FailoverTimeout: &fo})
		fw.connected = true
		job.fw = fw
		m.frameworks[fw.id] = fw
		m.log.WithFields(logrus.Fields{"framework": fw.id, "role": role, "driver": job.driver.id}).Info("simulated Spark framework subscribed")
		m.sandboxSparkLocked(job, "MesosCoarseGrainedSchedulerBackend", "Registered as framework ID "+fw.id)
		m.kickAllocator()
		if m.cfg.PerfTruth != nil {
			m.sparkTruthWaitLocked(job)
		}
	})
}

// sparkEventLocked queues an event for the simulated driver; events are
// handled from a timer callback so that no master state is changed while
// the master is still in the middle of the operation that sent them.
func (m *Master) sparkEventLocked(job *sparkJob, ev *scheduler.Event) {
	job.pending = append(job.pending, ev)
	if job.scheduled {
		return
	}
	job.scheduled = true
	m.afterLocked(0, func() {
		job.scheduled = false
		evs := job.pending
		job.pending = nil
		for _, ev := range evs {
			m.sparkHandleLocked(job, ev)
		}
	})
}

func (m *Master) sparkHandleLocked(job *sparkJob, ev *scheduler.Event) {
	fw := job.fw
	if fw == nil || fw.removed || job.done {
		return
	}
	switch ev.Type {
	case scheduler.Event_UPDATE:
		st := ev.Update.Status
		if len(st.UUID) > 0 {
			m.acknowledgeLocked(fw, st.TaskID.Value, st.UUID)
		}
	case scheduler.Event_OFFERS:
		m.sparkOffersLocked(job, ev.Offers.Offers)
	}
}

// sparkOffersLocked is Spark's resourceOffers for one OFFERS event.
func (m *Master) sparkOffersLocked(job *sparkJob, offers []mesos.Offer) {
	fw := job.fw
	c := job.conf
	decline := func(o *mesos.Offer, d time.Duration) {
		var f *mesos.Filters
		if d > 0 {
			s := d.Seconds()
			f = &mesos.Filters{RefuseSeconds: &s}
		}
		m.declineLocked(fw, []mesos.OfferID{o.ID}, f)
	}
	var matched []*mesos.Offer
	for i := range offers {
		if sparkConstraintsMet(c.Constraints, offers[i].Attributes) {
			matched = append(matched, &offers[i])
		} else {
			decline(&offers[i], c.RejectOfferDuration)
		}
	}
	// Round-robin: one executor per offer per round while any fits.
	avail := make([]Res, len(matched))
	for i, o := range matched {
		if p, err := parseResources(o.Resources); err == nil {
			avail[i] = p.res
		}
	}
	memNeed := toMilli(c.ExecutorMemoryMB + c.MemoryOverheadMB)
	tasks := make([][]mesos.TaskInfo, len(matched))
	cores := make([][]float64, len(matched))
	planned := 0.0
	for more := true; more; {
		more = false
		for i, o := range matched {
			left := math.Inf(1)
			if c.CoresMax > 0 {
				left = c.CoresMax - job.acquired - planned
			}
			offerCPUs := math.Floor(fromMilli(avail[i].scalar("cpus")))
			want := c.ExecutorCores
			if want <= 0 {
				want = math.Min(offerCPUs, left)
			}
			if want <= 0 || want > left || want > offerCPUs || memNeed > avail[i].scalar("mem") || job.failures[o.AgentID.Value] >= 2 {
				continue
			}
			more = true
			take := takeInOrder(o.Resources, avail[i], "cpus", toMilli(want)).plus(takeInOrder(o.Resources, avail[i], "mem", memNeed))
			avail[i] = avail[i].minus(take)
			id := strconv.Itoa(job.nextID)
			job.nextID++
			shell := true
			cmd := fmt.Sprintf("./bin/spark-class org.apache.spark.executor.CoarseGrainedExecutorBackend --cores %g --app-id %s", want, fw.id)
			tasks[i] = append(tasks[i], mesos.TaskInfo{
				Name:      c.AppName + " " + id,
				TaskID:    mesos.TaskID{Value: id},
				AgentID:   o.AgentID,
				Resources: take.proto(fmtLegacy, ""),
				Command:   &mesos.CommandInfo{Shell: &shell, Value: &cmd},
			})
			cores[i] = append(cores[i], want)
			planned += want
		}
	}
	for i, o := range matched {
		if len(tasks[i]) == 0 {
			if c.CoresMax > 0 && job.acquired+planned >= c.CoresMax {
				decline(o, c.RejectOfferDuration)
			} else {
				decline(o, 0)
			}
			continue
		}
		before := map[string]*task{}
		for id, t := range fw.tasks {
			before[id] = t
		}
		m.acceptLocked(fw, &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{o.ID},
			Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: tasks[i]}}}})
		for k, ti := range tasks[i] {
			t := fw.tasks[ti.TaskID.Value]
			if t == nil || before[t.id] == t {
				continue
			}
			t.executor = job
			job.executors[t] = cores[i][k]
			job.acquired += cores[i][k]
			m.log.WithFields(logrus.Fields{"framework": fw.id, "executor": t.id, "agent": t.agent.id, "resources": t.res.String()}).Info("simulated Spark executor launched")
			m.sandboxSparkLocked(job, "MesosCoarseGrainedSchedulerBackend", "Mesos task "+t.id+" is now TASK_RUNNING on agent "+t.agent.id+" ("+t.res.String()+")")
		}
	}
	m.sparkTruthMaybeStartLocked(job)
}

// takeInOrder takes amount (milli) of a scalar from what is left of an
// offer, walking the offer's resources in their order as Spark does.
func takeInOrder(order []mesos.Resource, avail Res, name string, amount int64) Res {
	var out Res
	for _, r := range order {
		if amount <= 0 || r.Name != name {
			continue
		}
		p, err := parseResources([]mesos.Resource{r})
		if err != nil || len(p.res) == 0 {
			continue
		}
		k := p.res[0].k
		i := avail.find(k)
		if i < 0 {
			continue
		}
		have := avail[i].v - out.scalarKey(k)
		n := min(have, amount)
		if n <= 0 {
			continue
		}
		out = out.plus(Res{{k: k, v: n}})
		amount -= n
	}
	return out
}

func sparkConstraintsMet(cons map[string][]string, attrs []mesos.Attribute) bool {
	for k, vals := range cons {
		found := false
		for _, a := range attrs {
			if a.Name != k {
				continue
			}
			if len(vals) == 0 {
				found = true
				break
			}
			var v string
			switch a.Type {
			case mesos.TEXT:
				v = a.Text.GetValue()
			case mesos.SCALAR:
				v = strconv.FormatFloat(a.Scalar.GetValue(), 'f', -1, 64)
			}
			for _, want := range vals {
				if want == v {
					found = true
				}
				// Spark: a scalar attribute matches when it is at least
				// one of the values.
				if f1, e1 := strconv.ParseFloat(want, 64); e1 == nil && a.Type == mesos.SCALAR && f1 <= a.Scalar.GetValue() {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (m *Master) sparkExecutorEndedLocked(job *sparkJob, t *task) {
	if c, ok := job.executors[t]; ok {
		job.acquired -= c
		delete(job.executors, t)
	}
	if t.state == mesos.TASK_FAILED || t.state == mesos.TASK_LOST || t.actual == mesos.TASK_FAILED || t.actual == mesos.TASK_LOST {
		job.failures[t.agent.id]++
	}
	if fw := job.fw; fw != nil && !fw.removed && !job.done {
		m.afterLocked(0, func() {
			if !fw.removed {
				m.reviveLocked(fw, nil) // Spark revives after every ended executor
			}
		})
	}
}

// sparkDriverEndedLocked ends the job: the framework is torn down, which
// kills its executors.
func (m *Master) sparkDriverEndedLocked(job *sparkJob) {
	if job.done {
		return
	}
	job.done = true
	delete(m.sparkJobs, job.driver)
	m.afterLocked(0, func() {
		if job.fw != nil && !job.fw.removed {
			// Spark stops its executors, then unregisters.
			for t := range job.executors {
				m.killTaskLocked(t)
			}
			m.removeFrameworkLocked(job.fw, "spark driver finished")
		}
	})
}

func (m *Master) sparkFrameworkRemovedLocked(job *sparkJob) {
	job.executors = map[*task]float64{}
	job.acquired = 0
}
