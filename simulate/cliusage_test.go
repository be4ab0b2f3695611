package simulate

import (
	"bytes"
	"strings"
	"testing"
)

// Tests of simulate's output as an operator comparing policies meets it
// (2026-11-27): flags that accepted nonsense, errors that did not say what
// to do, and the single-run table under power management.

// TestCommandRefusesNegativeDurations: a negative --power-off-after or
// --not-before-lead ran as 0 (power management off, no lead) and said
// nothing; it is refused, naming the flag and what 0 means.
func TestCommandRefusesNegativeDurations(t *testing.T) {
	trace := tracePath(t)
	for flag, means := range map[string]string{
		"--power-off-after": "keeps every agent on",
		"--not-before-lead": "submits every job at its arrival",
	} {
		_, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "3", "--policies", "bfd", flag, "-1m")
		if err == nil || !strings.Contains(err.Error(), flag+" -1m0s must be >= 0") || !strings.Contains(err.Error(), means) {
			t.Errorf("%s -1m: %v, want it refused, saying what 0 does", flag, err)
		}
		if _, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "3", "--policies", "bfd", flag, "0"); err != nil {
			t.Errorf("%s 0: %v", flag, err)
		}
	}
}

// TestCommandStrayArgumentSaysWhatToDo: parsing stops at the first
// argument that is not a flag, so the flags after it were silently not
// read; the error names that argument alone and says so.
func TestCommandStrayArgumentSaysWhatToDo(t *testing.T) {
	_, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "stray", "--policies", "bfd")
	if err == nil || !strings.Contains(err.Error(), `unexpected argument "stray"`) || !strings.Contains(err.Error(), "flags after it were not read") ||
		strings.Contains(err.Error(), "--policies") {
		t.Errorf("stray argument: %v", err)
	}
}

// TestCommandOffsetOutOfRangeSaysTheRange: --from -5 was `"-5" out of
// range`, without the range.
func TestCommandOffsetOutOfRangeSaysTheRange(t *testing.T) {
	for _, arg := range []string{"--from", "--to"} {
		_, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", arg, "-5")
		if err == nil || !strings.Contains(err.Error(), "want seconds from 0 to 315360000 into the trace, or a duration such as 1h") {
			t.Errorf("%s -5: %v", arg, err)
		}
	}
}

// TestCompareDefaultWarningNamesTheCSVColumn: with --format csv the
// default policy is marked in the default column, not by a JSON key.
func TestCompareDefaultWarningNamesTheCSVColumn(t *testing.T) {
	for format, want := range map[string]string{"csv": "true in the default column", "json": `"default": true`} {
		_, stderr, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "--jobs", "3", "--compare-default", "--format", format)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr, "--format "+format+" lists the runs, the default policy's marked "+want) {
			t.Errorf("--format %s: %q", format, stderr)
		}
	}
}

// TestWriteTableBillVsUnderPowerOff: with power management the operator
// pays the bill, so the one-run table gives the bill against the first
// policy's too ("bill vs"), next to the meter's "vs": bfd $2 meter, $4
// bill; dap $1 (-50.0%) and $5 (+25.0%). Without power management the
// table is unchanged (the bill is the always-on bill).
func TestWriteTableBillVsUnderPowerOff(t *testing.T) {
	rs := []Result{{Policy: "bfd", TotalCostUSD: 2, BillUSD: 4, AlwaysOnUSD: 8}, {Policy: "dap", TotalCostUSD: 1, BillUSD: 5, AlwaysOnUSD: 8}}
	var buf bytes.Buffer
	if err := writeTable(&buf, rs, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if f := strings.Fields(lines[0]); strings.Join(f[:13], " ") != "policy jobs cost $ vs bfd bill $ bill vs bfd always-on $" {
		t.Errorf("header: %q", lines[0])
	}
	if f := strings.Fields(lines[2]); len(f) < 7 || strings.Join(f[:7], " ") != "dap 0 1.00 -50.0% 5.00 +25.0% 8.00" {
		t.Errorf("dap: %q", lines[2])
	}
	buf.Reset()
	if err := writeTable(&buf, rs, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "bill vs") {
		t.Errorf("always on: %q", buf.String())
	}
	out, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hour", "0", "--sample", "5",
		"--policies", "fifo-consolidate,dap", "--power-off-after", "2m")
	if err != nil || !strings.Contains(out, "bill vs fifo-consolidate") {
		t.Errorf("--power-off-after: %v\n%s", err, out)
	}
}
