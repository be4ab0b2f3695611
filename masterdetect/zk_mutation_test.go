package masterdetect

import "testing"

// TestMasterInfoPortRange: a TCP port is 1..65535, both ends included
// (RFC 793's 16-bit port, 0 reserved): a master at port 1 or 65535 is
// usable, one at 0 or 65536 falls through to the pid.
func TestMasterInfoPortRange(t *testing.T) {
	for _, tc := range []struct {
		json, want string
	}{
		{`{"hostname":"m1","port":1}`, "m1:1"},
		{`{"hostname":"m1","port":65535}`, "m1:65535"},
		{`{"address":{"ip":"10.0.0.7","port":65535}}`, "10.0.0.7:65535"},
		{`{"hostname":"m1","port":65536,"pid":"master@10.0.0.9:5050"}`, "10.0.0.9:5050"},
		{`{"pid":"master@10.0.0.9:1"}`, "10.0.0.9:1"},
		{`{"pid":"master@10.0.0.9:65535"}`, "10.0.0.9:65535"},
		{`{"pid":"master@10.0.0.9:65536"}`, ""},
	} {
		mi, err := decodeMasterInfo([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		got, err := mi.HostPort()
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("HostPort(%s) = %q, %v; want %q", tc.json, got, err, tc.want)
		}
	}
}
