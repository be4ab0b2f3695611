package masterdetect

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "127.0.0.1:5050", want: Spec{Masters: []string{"127.0.0.1:5050"}}},
		{in: "http://m1:5050", want: Spec{Scheme: "http", Masters: []string{"m1:5050"}}},
		{in: "https://m1:5050/", want: Spec{Scheme: "https", Masters: []string{"m1:5050"}}},
		{in: "m1:5050, m2:5050,m3:5050", want: Spec{Masters: []string{"m1:5050", "m2:5050", "m3:5050"}}},
		{in: "https://m1:5050,https://m2:5050", want: Spec{Scheme: "https", Masters: []string{"m1:5050", "m2:5050"}}},
		{in: "zk://zk1:2181,zk2:2181/mesos", want: Spec{ZK: &ZKSpec{Servers: []string{"zk1:2181", "zk2:2181"}, Path: "/mesos"}}},
		{in: "zk://zk1,zk2/mesos/prod/", want: Spec{ZK: &ZKSpec{Servers: []string{"zk1:2181", "zk2:2181"}, Path: "/mesos/prod"}}},
		{in: "zk://user:pa@ss@zk1:2181/mesos", want: Spec{ZK: &ZKSpec{Servers: []string{"zk1:2181"}, Path: "/mesos", Auth: "user:pa@ss"}}},
		{in: "http://[::1]", want: Spec{Scheme: "http", Masters: []string{"[::1]"}}},
		{in: "zk://[::1]/mesos", want: Spec{ZK: &ZKSpec{Servers: []string{"[::1]:2181"}, Path: "/mesos"}}},
		{in: "m1:50x0", wantErr: "port"},
		{in: "zk://zk1:99999/mesos", wantErr: "port"},
		{in: "", wantErr: "set --mesos-master"},
		{in: "m1:5050,,m2:5050", wantErr: "entry 2 is empty"},
		{in: "http://m1:5050,m2:5050", wantErr: "same scheme"},
		{in: "m1:5050,zk://zk1:2181/mesos", wantErr: "whole value"},
		{in: "ftp://m1:5050", wantErr: "want host:port"},
		{in: "http://m1:5050/master", wantErr: "want host:port"},
		{in: "zk://zk1:2181", wantErr: "no znode path"},
		{in: "zk://zk1:2181,/mesos", wantErr: "empty ZooKeeper server"},
		{in: "zk://user@zk1:2181/mesos", wantErr: "user:password"},
		{in: "zk://0/0 /", wantErr: "white space"}, // found by FuzzParse: read back as "/0"
		{in: "zk://zk1/me sos", wantErr: "white space"},
	} {
		got, err := Parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %+v (zk %+v), %v; want %+v (zk %+v)", tc.in, got, got.ZK, err, tc.want, tc.want.ZK)
		}
	}
}

func TestSpecStringsHideZooKeeperCredentials(t *testing.T) {
	sp, err := Parse("zk://u:secret@zk1:2181,zk2:2181/mesos")
	if err != nil {
		t.Fatal(err)
	}
	if s := sp.String(); s != "zk://zk1:2181,zk2:2181/mesos" {
		t.Fatalf("String() = %q", s)
	}
	if s := sp.ZK.URL(); s != "zk://u:secret@zk1:2181,zk2:2181/mesos" {
		t.Fatalf("URL() = %q", s)
	}
	sp, _ = Parse("https://m1:5050,https://m2:5050")
	if s := sp.String(); s != "https://m1:5050,https://m2:5050" {
		t.Fatalf("String() = %q", s)
	}
}

func TestLeaderNode(t *testing.T) {
	for _, tc := range []struct {
		children []string
		want     string
	}{
		{[]string{"json.info_0000000012", "json.info_0000000003", "json.info_0000000010"}, "json.info_0000000003"},
		// Mesos' log replicas and other nodes share the path; only
		// json.info_ nodes are masters.
		{[]string{"log_replicas", "info_0000000001", "json.info_0000000007"}, "json.info_0000000007"},
		// Sequence numbers compare as numbers (past the ten digits).
		{[]string{"json.info_10000000000", "json.info_9999999999"}, "json.info_9999999999"},
		{[]string{"log_replicas", "json.info_x"}, ""},
		{nil, ""},
	} {
		got, ok := LeaderNode(tc.children)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("LeaderNode(%v) = %q, %v; want %q", tc.children, got, ok, tc.want)
		}
	}
}

// realMasterInfo is the content of a real Mesos 1.12.0 master's znode
// (mesos-master --ip=127.0.0.1 --port=15051 --zk=zk://127.0.0.1:21811/mesos).
const realMasterInfo = `{"address":{"hostname":"localhost","ip":"127.0.0.1","port":15051},"capabilities":[{"type":"AGENT_UPDATE"},{"type":"AGENT_DRAINING"},{"type":"QUOTA_V2"}],"hostname":"localhost","id":"e1064884-d250-45e6-93f7-395c1f980dd5","ip":16777343,"pid":"master@127.0.0.1:15051","port":15051,"version":"1.12.0"}`

func TestMasterInfoHostPort(t *testing.T) {
	for _, tc := range []struct {
		json, want string
	}{
		{realMasterInfo, "localhost:15051"},
		{`{"address":{"ip":"10.0.0.7","port":5050}}`, "10.0.0.7:5050"},
		{`{"hostname":"m1","port":5051}`, "m1:5051"},
		{`{"pid":"master@10.0.0.9:5050"}`, "10.0.0.9:5050"},
		{`{"address":{"ip":"::1","port":5050}}`, "[::1]:5050"},
		{`{"id":"x"}`, ""},
		{`{"hostnAme":"]","port":1}`, ""}, // found by FuzzMasterInfo in CI
		{`{"hostname":"]","address":{"ip":"10.0.0.7"},"port":5050}`, "10.0.0.7:5050"},
		{`{"hostname":"m1","port":70000,"pid":"master@10.0.0.9:5050"}`, "10.0.0.9:5050"},
		{`{"pid":"master@10.0.0.9:0"}`, ""},
		// A TCP port is 1..65535, both ends included (RFC 793's 16-bit
		// port, 0 reserved): 0 or 65536 falls through to the pid.
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
