package scheduler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// App is the Spark application a job runs.
type App struct {
	AppResource string            `json:"appResource"`
	MainClass   string            `json:"mainClass"`
	Args        []string          `json:"args,omitempty"`
	SparkConf   map[string]string `json:"sparkConf,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
}

// Driver sizes the Spark driver.
type Driver struct {
	Cores    float64 `json:"cores"`
	MemoryMB int     `json:"memoryMB"`
}

// Deadline is either an absolute time (RFC 3339 in JSON) or a number of
// seconds from submission (a JSON number). Exactly one is set.
type Deadline struct {
	At      *time.Time
	Seconds *float64
}

// MarshalJSON writes the deadline in the form it was given.
func (d Deadline) MarshalJSON() ([]byte, error) {
	switch {
	case d.At != nil:
		return json.Marshal(d.At.UTC().Format(time.RFC3339Nano))
	case d.Seconds != nil:
		return json.Marshal(*d.Seconds)
	}
	return []byte("null"), nil
}

// UnmarshalJSON accepts an RFC 3339 string or a number of seconds.
func (d *Deadline) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return &FieldError{Field: "deadline", Msg: fmt.Sprintf("must be an RFC 3339 time such as 2026-11-22T10:00:00Z or a number of seconds from now; %q is neither", truncate(s, 64))}
		}
		d.At, d.Seconds = &t, nil
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return &FieldError{Field: "deadline", Msg: "must be an RFC 3339 time string or a number of seconds from now"}
	}
	d.Seconds, d.At = &f, nil
	return nil
}

// NotBefore is a job's earliest start time: an RFC 3339 time in JSON.
type NotBefore struct{ time.Time }

// MarshalJSON writes the time in RFC 3339, UTC.
func (n NotBefore) MarshalJSON() ([]byte, error) {
	return json.Marshal(n.UTC().Format(time.RFC3339Nano))
}

// UnmarshalJSON accepts an RFC 3339 string; anything else is an error
// naming the field.
func (n *NotBefore) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(bytes.TrimSpace(b), &s); err != nil {
		return &FieldError{Field: "notBefore", Msg: "must be an RFC 3339 time string such as 2026-11-22T02:40:00Z"}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return &FieldError{Field: "notBefore", Msg: fmt.Sprintf("must be an RFC 3339 time such as 2026-11-22T02:40:00Z; %q is not", truncate(s, 64))}
	}
	n.Time = t.UTC()
	return nil
}

// NotBeforeAt is the job's earliest start time, nil when it has none.
func (s *Spec) NotBeforeAt() *time.Time {
	if s.NotBefore == nil || s.NotBefore.IsZero() {
		return nil
	}
	t := s.NotBefore.UTC()
	return &t
}

// CheckNotBefore checks the earliest start time against the resolved
// deadline: a job cannot be asked to start after it must have ended.
func CheckNotBefore(j *Job) error {
	nb := j.NotBeforeAt()
	if nb == nil || j.DeadlineAt == nil {
		return nil
	}
	if !nb.Before(*j.DeadlineAt) {
		return fieldErr("notBefore", "%s is not before the deadline %s", nb.Format(time.RFC3339), j.DeadlineAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Spec is what a client submits: the job JSON of the REST contract.
type Spec struct {
	ID               string    `json:"id,omitempty"`
	Name             string    `json:"name,omitempty"`
	App              App       `json:"app"`
	Executors        int       `json:"executors"`
	ExecutorCores    int       `json:"executorCores"`
	ExecutorMemoryMB int       `json:"executorMemoryMB"`
	MemoryOverheadMB int       `json:"memoryOverheadMB,omitempty"`
	Driver           *Driver   `json:"driver,omitempty"`
	Deadline         *Deadline `json:"deadline,omitempty"`
	// NotBefore, if set, is the earliest time the job may start (Lim's
	// earliest start time): it waits until then, and runs inside
	// [NotBefore, deadline] when that is cheapest (docs/power.md).
	NotBefore                *NotBefore        `json:"notBefore,omitempty"`
	EstimatedDurationSeconds float64           `json:"estimatedDurationSeconds,omitempty"`
	Retries                  int               `json:"retries,omitempty"`
	Labels                   map[string]string `json:"labels,omitempty"`
	// Size hints for the learned run-time model (docs/learning.md): the
	// input size in GB and the number of iterations (labels
	// sparkpack.io/input-size-gb and sparkpack.io/iterations give them too).
	InputSizeGB float64 `json:"inputSizeGB,omitempty"`
	Iterations  int     `json:"iterations,omitempty"`
	// MinExecutors and MaxExecutors bound "executors": "auto" (right-sizing).
	MinExecutors int `json:"minExecutors,omitempty"`
	MaxExecutors int `json:"maxExecutors,omitempty"`
	// Sizing is set by sparkpack for a job submitted with "executors":
	// "auto": the count it chose and why. A client may not send it.
	Sizing *Sizing `json:"sizing,omitempty"`
}

// Sizing records how sparkpack right-sized a job's executors.
type Sizing struct {
	Auto       bool    `json:"auto"`
	Executors  int     `json:"executors,omitempty"`
	P50Seconds float64 `json:"p50Seconds,omitempty"`
	P90Seconds float64 `json:"p90Seconds,omitempty"`
	// Level is the model's level the choice came from (signature,
	// app-type or prior).
	Level  string `json:"level,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AutoExecutors reports whether the job asked sparkpack to choose its
// executor count.
func (s *Spec) AutoExecutors() bool { return s.Sizing != nil && s.Sizing.Auto }

// Job is a submitted job with its life so far.
type Job struct {
	Spec
	// Team is the team the job counts against: the submitting token's
	// team, else the job's "team" label ("" is the default team). Fixed at
	// submission (TeamOf) and recorded with the job.
	Team        string     `json:"team,omitempty"`
	State       State      `json:"state"`
	SubmittedAt time.Time  `json:"submittedAt"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
	// DeadlineAt is the absolute deadline (Spec.Deadline resolved at submission).
	DeadlineAt    *time.Time `json:"deadlineAt,omitempty"`
	WaitingReason string     `json:"waitingReason,omitempty"`
	AtRisk        bool       `json:"atRisk"`
	// KillRequested is set when a user asked to stop a job that already
	// holds resources; the framework finishes the kill.
	KillRequested bool `json:"killRequested,omitempty"`
	// Attempt counts how often the job was started (retries add one).
	Attempt int `json:"attempt,omitempty"`
	// FailedRuns counts the runs of the job's application that failed;
	// the job goes back to the queue while FailedRuns <= Retries, so it
	// runs at most Retries+1 times. Launches that Mesos lost before the
	// driver started are not runs (see DriverRecord.LostLaunches).
	FailedRuns int `json:"failedRuns,omitempty"`
	// LastStartedAt is when the job's current (or last) run started
	// RUNNING; StartedAt is its first run's.
	LastStartedAt *time.Time `json:"lastStartedAt,omitempty"`
	// Preemptions counts how often the job was evicted to make room for a
	// deadline job (it went back to the queue and ran again from scratch).
	Preemptions int `json:"preemptions,omitempty"`
	// LostWorkSeconds is the run time its evicted runs had done, lost.
	LostWorkSeconds float64 `json:"lostWorkSeconds,omitempty"`
	// PreemptRequested, when not empty, is why the core decided to evict
	// the job: the framework kills its driver and sends it back to the
	// queue. Durable, so that a restart finishes the eviction.
	PreemptRequested string `json:"preemptRequested,omitempty"`
	// Fingerprint identifies the submitted body, for idempotent resubmission.
	Fingerprint string `json:"-"`
	// EndedRun, set by the core when a run ends (Report), is the attempt's
	// record for the run history: the store writes it in the transaction
	// of the job's end. Not part of the job's JSON.
	EndedRun *RunRecord `json:"-"`

	// SubmittedBy is the name of the token that submitted the job ("" when
	// none did), stored with it: whose estimates the job's estimate counts
	// with when it has no team (EstimateKeyOf). Not part of the job's JSON.
	SubmittedBy string `json:"-"`
}

// Defaults that Spark itself uses when nothing is set.
const (
	DefaultDriverCores    = 1
	DefaultDriverMemoryMB = 1024
	MinMemoryOverheadMB   = 384 // Spark's MEMORY_OVERHEAD_MINIMUM
)

// SparkMemoryOverheadMB is Spark on Mesos' default executor memory overhead:
// max(384 MiB, 10% of the executor memory), truncated to whole MiB.
func SparkMemoryOverheadMB(executorMemoryMB int) int {
	o := int(0.10 * float64(executorMemoryMB))
	if o < MinMemoryOverheadMB {
		return MinMemoryOverheadMB
	}
	return o
}

// OverheadMB is the memory overhead per executor, explicit or Spark's default.
func (s *Spec) OverheadMB() int {
	if s.MemoryOverheadMB > 0 {
		return s.MemoryOverheadMB
	}
	return SparkMemoryOverheadMB(s.ExecutorMemoryMB)
}

// ExecutorTotalMemMB is what one executor needs from an agent: memory plus overhead.
func (s *Spec) ExecutorTotalMemMB() int { return s.ExecutorMemoryMB + s.OverheadMB() }

// DriverOrDefault returns the driver size with Spark's defaults filled in.
func (s *Spec) DriverOrDefault() Driver {
	d := Driver{Cores: DefaultDriverCores, MemoryMB: DefaultDriverMemoryMB}
	if s.Driver != nil {
		if s.Driver.Cores > 0 {
			d.Cores = s.Driver.Cores
		}
		if s.Driver.MemoryMB > 0 {
			d.MemoryMB = s.Driver.MemoryMB
		}
	}
	return d
}

// EstimatedDuration is the job's expected run time, zero when unknown.
func (s *Spec) EstimatedDuration() time.Duration {
	return time.Duration(s.EstimatedDurationSeconds * float64(time.Second))
}

// ResolveDeadline turns the spec's deadline into an absolute time, counting
// relative deadlines from submittedAt. Nil when the job has no deadline.
func (s *Spec) ResolveDeadline(submittedAt time.Time) *time.Time {
	if s.Deadline == nil {
		return nil
	}
	var t time.Time
	switch {
	case s.Deadline.At != nil:
		t = s.Deadline.At.UTC()
	case s.Deadline.Seconds != nil:
		t = submittedAt.Add(time.Duration(*s.Deadline.Seconds * float64(time.Second))).UTC()
	default:
		return nil
	}
	return &t
}

// Fingerprint is a digest of the spec's canonical JSON (map keys sorted,
// defaults not filled in): two submissions are "the same body" exactly when
// their fingerprints are equal.
func (s *Spec) Fingerprint() string {
	b, err := json.Marshal(s)
	if err != nil {
		// A Spec always marshals (strings, numbers, maps of strings).
		panic(fmt.Sprintf("marshal spec: %v", err))
	}
	return FingerprintOf(b)
}

// FingerprintOf is the fingerprint of a spec from its JSON encoding
// (json.Marshal of the Spec): Fingerprint for callers that hold it.
func FingerprintOf(specJSON []byte) string {
	sum := sha256.Sum256(specJSON)
	return hex.EncodeToString(sum[:])
}

// Role is the unique top-level Mesos role of a job.
func Role(jobID string) string { return "sparkpack-job-" + jobID }

// TeamLabel is the job label that names a job's team when the submitting
// token has none.
const TeamLabel = "team"

// TeamOf is the team a job submitted by a token of team tokenTeam belongs
// to: the token's team, else the job's "team" label, else "" (the default
// team).
func TeamOf(tokenTeam string, s *Spec) string {
	if tokenTeam != "" {
		return tokenTeam
	}
	return s.Labels[TeamLabel]
}

// IsDeadlineJob reports whether the job carries a deadline.
func (j *Job) IsDeadlineJob() bool { return j.DeadlineAt != nil }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// formatSeconds prints a seconds value without a needless fraction.
func formatSeconds(f float64) string {
	if a := math.Abs(f); a >= 1e15 || (a != 0 && a < 0.001) {
		// 1e308 as "1e+308", not its 309 digits; 0.0001 not as "0."
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	if f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strings.TrimRight(strconv.FormatFloat(f, 'f', 3, 64), "0")
}
