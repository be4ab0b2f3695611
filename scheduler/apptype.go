package scheduler

import (
	"strings"

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
