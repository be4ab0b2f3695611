package workload

import (
	"bytes"
	_ "embed"
	"fmt"
)

// FB2009Name is the file name of the embedded SWIM trace.
const FB2009Name = "FB-2009_samples_24_times_1hr_0.tsv"

// fb2009 is the SWIM Facebook 2009 trace (24 hourly samples), shipped with
// sparkpack under the SWIM project's BSD license (traces/LICENSE.SWIM).
//
//go:embed traces/FB-2009_samples_24_times_1hr_0.tsv
var fb2009 []byte

// FB2009 returns the jobs of the embedded SWIM FB-2009 trace.
func FB2009() ([]TraceJob, error) {
	jobs, err := Parse(bytes.NewReader(fb2009))
	if err != nil {
		return nil, fmt.Errorf("embedded trace %s: %w", FB2009Name, err)
	}
	return jobs, nil
}
