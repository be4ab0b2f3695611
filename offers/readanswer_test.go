package offers

import (
	"bytes"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

// An operator answer is read into one buffer of its size (Content-Length,
// or the size of the answer before), not grown by copies: a GET_AGENTS
// answer of a large cluster is megabytes, read every refresh (issue 30).
func TestReadAnswerReadsIntoOneBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the code: byte counts are checked without it (make test's first go test run)")
	}
	const size = 4 << 20
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	for _, tc := range []struct {
		name                    string
		contentLength, sizeHint int64
		body                    []byte
		maxAlloc                int // bytes allocated, at most
	}{
		{"content length", size, 0, body, size + size/8},
		{"size of the answer before", -1, size, body, size + size/8},
		{"a little larger than before", -1, size - size/32, body, size + size/8},
		{"no size known", -1, 0, body, 4 * size},
		{"larger than before", -1, size / 4, body, 4 * size},
		{"empty", 0, 0, nil, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := iotest.HalfReader(bytes.NewReader(tc.body)) // short reads, as from a chunked answer
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			got, err := readAnswer(r, tc.contentLength, tc.sizeHint)
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Fatalf("read %d bytes, want the %d of the answer", len(got), len(tc.body))
			}
			if n := int(m1.TotalAlloc - m0.TotalAlloc); n > tc.maxAlloc {
				t.Errorf("allocated %d bytes to read %d, want at most %d", n, len(tc.body), tc.maxAlloc)
			}
		})
	}
	// An answer is cut at maxAnswer, as before.
	got, err := readAnswer(io.LimitReader(zeros{}, maxAnswer+10), -1, 0)
	if err != nil || len(got) != maxAnswer {
		t.Fatalf("endless answer: %d bytes, %v; want %d", len(got), err, maxAnswer)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
