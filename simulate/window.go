package simulate

import (
	"fmt"

	"github.com/sparkpack/sparkpack/workload"
)

// replayedWindow is the window a run replays and bills: without --hour,
// --hours or --from it starts at the first arrival, not at the trace's
// second 0. (A trace file that starts later, such as one hour cut from the
// SWIM trace, was billed from 0: the idle hours before its first job, with
// every agent on, went into the bill and the always-on bill alike.)
func replayedWindow(w window, arrivals []workload.TraceJob, set map[string]bool) window {
	if w.Hour >= 0 || set["from"] || len(arrivals) == 0 || arrivals[0].Submit <= w.From {
		return w
	}
	w.From = arrivals[0].Submit
	w.Label = fmt.Sprintf("[%s, %s)", fmtOffset(w.From), fmtOffset(w.To))
	return w
}
