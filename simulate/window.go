package simulate

import (
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// replayedWindow is the window a run replays and bills: without --hour,
// --hours or --from it starts at the start of the trace's hour that holds
// the first arrival, not at the trace's second 0. (A trace file that
// starts later, such as one hour cut from the SWIM trace, was billed from
// 0: the idle hours before its first job, with every agent on, went into
// the bill and the always-on bill alike.)
func replayedWindow(w window, arrivals []workload.TraceJob, set map[string]bool) window {
	if w.Hour >= 0 || set["from"] || len(arrivals) == 0 || arrivals[0].Submit <= w.From {
		return w
	}
	// From the start of the trace's hour that holds the first arrival: a
	// file that holds hour 16 alone is billed from hour 16, not from 0, and
	// the whole trace stays the same run as its first hour (--hour 0).
	from := arrivals[0].Submit.Truncate(time.Hour)
	if from <= w.From {
		return w
	}
	w.From = from
	w.Label = fmt.Sprintf("[%s, %s)", fmtOffset(w.From), fmtOffset(w.To))
	return w
}
