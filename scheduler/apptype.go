package scheduler

import (
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// AppTypeLabel is the job label that names the application type for
// placement (wordcount, sort or pagerank); without it the type is inferred
// from the main class.
const AppTypeLabel = "sparkpack.io/app-type"

// AppType is the job's application type as placement understands it
// (placement.AppWordCount, AppSort, AppPageRank), or "" when unknown: the
// AppTypeLabel label if it names a known type, else a guess from the main
// class (Spark's examples JavaWordCount, SortByKey, SparkPageRank and
// classes named like them).
func AppType(j *Job) string {
	if v, ok := j.Labels[AppTypeLabel]; ok {
		switch t := strings.ToLower(strings.TrimSpace(v)); t {
		case placement.AppWordCount, placement.AppSort, placement.AppPageRank:
			return t
		}
	}
	c := strings.ToLower(j.App.MainClass)
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		c = c[i+1:]
	}
	switch {
	case strings.Contains(c, "pagerank"):
		return placement.AppPageRank
	case strings.Contains(c, "wordcount"):
		return placement.AppWordCount
	case strings.Contains(c, "sort"):
		return placement.AppSort
	}
	return ""
}

// demandAt is the entry's demand as the policy sees it at now: the time
// of the decision and the estimate in wall time (see DurationScale), so
// that deadline-aware policies compare like with like.
func (c *Core) demandAt(e *Entry, now time.Time) placement.Demand {
	d := e.Demand
	d.Now = now
	d.EstimatedDuration = c.estimate(e)
	return d
}
