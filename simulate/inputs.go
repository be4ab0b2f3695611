package simulate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sparkpack/sparkpack/workload"
)

// readMix reads and validates --mix.
func readMix(path string) (workload.Mix, error) {
	file, err := os.Open(path)
	if err != nil {
		return workload.Mix{}, fmt.Errorf("--mix: %w", err)
	}
	defer file.Close()
	m, err := workload.ParseMix(file)
	if err != nil {
		return workload.Mix{}, fmt.Errorf("--mix %s: %w", path, err)
	}
	return m, nil
}

// readTrace reads --trace, or the default trace, or the embedded copy.
func readTrace(path string) ([]workload.TraceJob, string, error) {
	tracePath, err := resolveTrace(path)
	if err != nil && path == "" {
		all, err := workload.FB2009()
		return all, "embedded " + workload.FB2009Name, err
	} else if err != nil {
		return nil, "", err
	}
	file, err := os.Open(tracePath)
	if err != nil {
		return nil, "", fmt.Errorf("--trace: %w", err)
	}
	defer file.Close()
	all, err := workload.Parse(file)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", tracePath, err)
	}
	return all, filepath.Base(tracePath), nil
}

// scaleWorkload multiplies every byte count of the workload by k.
func scaleWorkload(wl []workload.Job, k float64) []workload.Job {
	out := make([]workload.Job, len(wl))
	for i, j := range wl {
		t := Scale([]workload.TraceJob{{InputBytes: j.Profile.InputBytes, ShuffleBytes: j.Profile.ShuffleBytes, OutputBytes: j.Profile.OutputBytes}}, k)[0]
		j.Profile.InputBytes, j.Profile.ShuffleBytes, j.Profile.OutputBytes = t.InputBytes, t.ShuffleBytes, t.OutputBytes
		out[i] = j
	}
	return out
}
