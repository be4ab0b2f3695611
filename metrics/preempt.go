package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// preemptionMetrics count evictions of running jobs for deadline jobs
// (serve --preemption).
type preemptionMetrics struct {
	// Preemptions counts eviction decisions by policy (mdf, mlf, srt).
	Preemptions *prometheus.CounterVec
	// PreemptedWork is the run time evicted jobs had done, lost (Spark
	// cannot resume an application: an evicted job runs again from scratch).
	PreemptedWork prometheus.Counter
}

func (m *Metrics) registerPreemption() {
	m.Preemptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sparkpack_preemptions_total", Help: "Running jobs evicted to make room for a deadline job, by eviction policy."},
		[]string{"policy"})
	m.PreemptedWork = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sparkpack_preempted_work_seconds_total", Help: "Run time of evicted jobs lost to preemption (an evicted Spark application restarts from scratch)."})
	m.Registry.MustRegister(m.Preemptions, m.PreemptedWork)
}

// Preempted counts one eviction decision of the policy.
func (m *Metrics) Preempted(policy string) {
	if m != nil {
		m.Preemptions.WithLabelValues(policy).Inc()
	}
}

// LostWork adds the run time an evicted job had done.
func (m *Metrics) LostWork(d time.Duration) {
	if m != nil && d > 0 {
		m.PreemptedWork.Add(d.Seconds())
	}
}
