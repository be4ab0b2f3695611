package offers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func encodeRecords(recs ...[]byte) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		fmt.Fprintf(&b, "%d\n", len(r))
		b.Write(r)
	}
	return b.Bytes()
}

func TestRecordReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want []string
		err  string // "" means io.EOF after the records
	}{
		{"two records", "3\nabc5\nhello", 100, []string{"abc", "hello"}, ""},
		{"empty record", "0\n2\nhi", 100, []string{"", "hi"}, ""},
		{"too long", "101\n", 100, nil, "more than 100 bytes"},
		{"not a number", "1x\n", 100, nil, "bad record length"},
		{"no digits", "\nabc", 100, nil, "empty record length"},
		{"cut record", "5\nabc", 100, nil, io.ErrUnexpectedEOF.Error()},
		{"cut length", "12", 100, nil, io.ErrUnexpectedEOF.Error()},
		{"eleven digits", "00000000001\na", 1 << 30, nil, "bad record length"},
	} {
		rr := newRecordReader(strings.NewReader(tc.in), tc.max)
		var got []string
		var err error
		for {
			var f []byte
			if f, err = rr.ReadFrame(); err != nil {
				break
			}
			got = append(got, string(f))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: records %q, want %q", tc.name, got, tc.want)
		}
		if tc.err == "" && !errors.Is(err, io.EOF) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

// FuzzRecordReader: any input gives records or an error, never a panic or a
// record above the limit; well-formed input comes back as written.
func FuzzRecordReader(f *testing.F) {
	f.Add([]byte("3\nabc5\nhello"))
	f.Add([]byte("99999999999\n"))
	f.Add([]byte("-1\n"))
	f.Add(encodeRecords([]byte("x"), nil, bytes.Repeat([]byte("y"), 300)))
	f.Fuzz(func(t *testing.T, in []byte) {
		rr := newRecordReader(bytes.NewReader(in), 256)
		var out [][]byte
		for i := 0; i <= len(in); i++ {
			frame, err := rr.ReadFrame()
			if err != nil {
				break
			}
			if len(frame) > 256 {
				t.Fatalf("a record of %d bytes above the limit", len(frame))
			}
			out = append(out, frame)
		}
		// What was read, written again and read back, is the same.
		rr = newRecordReader(bytes.NewReader(encodeRecords(out...)), 256)
		for i, want := range out {
			got, err := rr.ReadFrame()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("record %d: %q, %v; want %q", i, got, err, want)
			}
		}
	})
}
