package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// TraceJob is one line of a SWIM trace.
type TraceJob struct {
	ID string
	// Submit is the submission time from the start of the trace.
	Submit time.Duration
	// Gap is the time since the previous submission, as the trace states it.
	Gap          time.Duration
	InputBytes   int64
	ShuffleBytes int64
	OutputBytes  int64
	// Line is the 1-based line number in the trace file.
	Line int
}

// Limits of the parser: a line longer than MaxLineBytes, or a time beyond
// MaxTraceSeconds, is an error rather than an allocation or an overflow.
const (
	MaxLineBytes    = 4096
	MaxTraceSeconds = 10 * 365 * 24 * 3600
	// HourSeconds is the length of one sample of the FB-2009 trace.
	HourSeconds = 3600
)

// ParseError locates a malformed line.
type ParseError struct {
	Line  int
	Field string
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("trace line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("trace line %d: %s: %s", e.Line, e.Field, e.Msg)
}

var fieldNames = [6]string{"job id", "submit time", "gap", "map input bytes", "shuffle bytes", "output bytes"}

// Parse reads a SWIM trace: one job a line, six tab-separated fields (job
// id, submit time in seconds, gap since the previous submission in
// seconds, map input bytes, shuffle bytes, output bytes). Blank lines and
// lines starting with '#' are skipped; a trailing '\r' is ignored. Times
// must be non-negative and submit times non-decreasing; byte counts are
// non-negative integers. Errors are *ParseError naming the line.
func Parse(r io.Reader) ([]TraceJob, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), MaxLineBytes)
	var jobs []TraceJob
	line := 0
	var last time.Duration
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 6 {
			return nil, &ParseError{Line: line, Msg: fmt.Sprintf("want 6 tab-separated fields (%s), got %d", strings.Join(fieldNames[:], ", "), len(f))}
		}
		id := strings.TrimSpace(f[0])
		if id == "" {
			return nil, &ParseError{Line: line, Field: fieldNames[0], Msg: "empty"}
		}
		if strings.HasPrefix(id, "#") {
			// Format would write it at the start of a line: a comment.
			return nil, &ParseError{Line: line, Field: fieldNames[0], Msg: fmt.Sprintf("%q starts with '#', which marks a comment line; rename the job", clip(id))}
		}
		var secs [2]float64
		for i := 1; i <= 2; i++ {
			v, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
			if err != nil || math.IsNaN(v) || v < 0 || v > MaxTraceSeconds {
				return nil, &ParseError{Line: line, Field: fieldNames[i], Msg: fmt.Sprintf("%q is not a number of seconds in [0, %d]", clip(f[i]), MaxTraceSeconds)}
			}
			secs[i-1] = v
		}
		var bytes [3]int64
		for i := 3; i <= 5; i++ {
			v, err := strconv.ParseInt(strings.TrimSpace(f[i]), 10, 64)
			if err != nil || v < 0 {
				return nil, &ParseError{Line: line, Field: fieldNames[i], Msg: fmt.Sprintf("%q is not a non-negative integer", clip(f[i]))}
			}
			bytes[i-3] = v
		}
		submit := time.Duration(secs[0] * float64(time.Second))
		if submit < last {
			return nil, &ParseError{Line: line, Field: fieldNames[1], Msg: fmt.Sprintf("%gs is before the previous job's %gs", secs[0], last.Seconds())}
		}
		last = submit
		jobs = append(jobs, TraceJob{
			ID: id, Submit: submit, Gap: time.Duration(secs[1] * float64(time.Second)),
			InputBytes: bytes[0], ShuffleBytes: bytes[1], OutputBytes: bytes[2], Line: line,
		})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
		}
		return nil, fmt.Errorf("read trace: %w", err)
	}
	return jobs, nil
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// Format writes jobs in the trace format Parse reads.
func Format(w io.Writer, jobs []TraceJob) error {
	bw := bufio.NewWriter(w)
	for _, j := range jobs {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%d\t%d\t%d\n", j.ID,
			strconv.FormatFloat(j.Submit.Seconds(), 'f', -1, 64), strconv.FormatFloat(j.Gap.Seconds(), 'f', -1, 64),
			j.InputBytes, j.ShuffleBytes, j.OutputBytes)
	}
	return bw.Flush()
}

// Window returns the jobs submitted in [from, to), with submission times
// unchanged.
func Window(jobs []TraceJob, from, to time.Duration) []TraceJob {
	var out []TraceJob
	for _, j := range jobs {
		if j.Submit >= from && j.Submit < to {
			out = append(out, j)
		}
	}
	return out
}

// Hour returns the jobs of the n-th one-hour sample (0-based): those
// submitted in [n h, (n+1) h).
func Hour(jobs []TraceJob, n int) []TraceJob {
	return Window(jobs, time.Duration(n)*HourSeconds*time.Second, time.Duration(n+1)*HourSeconds*time.Second)
}
