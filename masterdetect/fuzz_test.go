package masterdetect

import (
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// validPort reports whether hp is host:port with a port a dial can use
// (or, unless needPort, a bare host: the scheme's port), its host valid
// UTF-8 without white space, control or invisible format characters (no resolver takes
// them: a dial would fail and be retried forever).
func validPort(hp string, needPort bool) bool {
	if !utf8.ValidString(hp) || strings.ContainsFunc(hp, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return false
	}
	_, p, err := net.SplitHostPort(hp)
	if err != nil {
		bracketed := strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]")
		return !needPort && (bracketed || !strings.Contains(hp, ":"))
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// FuzzParse: --mesos-master never panics the parser; what it accepts
// names dialable host:ports and reads back the same from its URL/String
// form (the Spark drivers are handed that form).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.1:5050", "https://m1:5050/", "m1:5050, m2:5050", "zk://zk1:2181,zk2/mesos",
		"zk://user:pa@ss@zk1:2181/mesos", "zk://[::1]:2181/mesos", "zk://::1/mesos", "zk://zk1:21B1/mesos", "m1:50x0", "m1:",
		"http://m1:5050,https://m2:5050", "zk://zk1:99999/mesos", "http://[::1]", "zk://[::1]/mesos",
		"m\u00a01:5050", "m\v1:5050", "m\x001:5050", "zk://zk\t1:2181/mesos", "http://m\u20281:5050", "m\xff:5050",
		"m1\u200b:5050", "zk://\ufeffzk1/mesos", "zk://zk1/mesos//x", "zk://zk1/mesos/./x", "zk://zk1/mesos/..", "zk://zk1/\uf000", "zk://zk1/m\ufffe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			return
		}
		if sp.ZK != nil {
			if len(sp.ZK.Servers) == 0 || sp.ZK.Path == "" || sp.ZK.Path[0] != '/' {
				t.Fatalf("Parse(%q) = %+v", s, *sp.ZK)
			}
			// A path ZooKeeper takes (its server's PathUtils.validatePath).
			for _, n := range strings.Split(sp.ZK.Path[1:], "/") {
				if n == "" || n == "." || n == ".." {
					t.Fatalf("Parse(%q): znode path %q has a node %q", s, sp.ZK.Path, n)
				}
			}
			for _, r := range sp.ZK.Path {
				if r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0xd800 && r <= 0xf8ff || r >= 0xfff0 {
					t.Fatalf("Parse(%q): znode path %q holds %U", s, sp.ZK.Path, r)
				}
			}
			for _, h := range sp.ZK.Servers {
				if !validPort(h, true) {
					t.Fatalf("Parse(%q): ZooKeeper server %q is not a usable host:port", s, h)
				}
			}
			back, err := Parse(sp.ZK.URL())
			if err != nil || back.ZK == nil || !reflect.DeepEqual(*back.ZK, *sp.ZK) {
				t.Fatalf("Parse(%q) = %+v; its URL %q reads back as %+v, %v", s, *sp.ZK, sp.ZK.URL(), back.ZK, err)
			}
			return
		}
		if len(sp.Masters) == 0 {
			t.Fatalf("Parse(%q): no masters and no error", s)
		}
		for _, m := range sp.Masters {
			if !validPort(m, false) {
				t.Fatalf("Parse(%q): master %q is not a usable host:port", s, m)
			}
		}
		back, err := Parse(sp.String())
		if err != nil || !reflect.DeepEqual(back, sp) {
			t.Fatalf("Parse(%q) = %+v; %q reads back as %+v, %v", s, sp, sp.String(), back, err)
		}
	})
}

// FuzzMasterInfo: a znode's content (written by whatever registers under
// the masters' path) never panics the decoder, and an address it yields
// is host:port.
func FuzzMasterInfo(f *testing.F) {
	f.Add([]byte(realMasterInfo))
	f.Add([]byte(`{"pid":"master@10.0.0.9:5050"}`))
	f.Add([]byte(`{"address":{"ip":"::1","port":5050}}`))
	f.Add([]byte(`{"hostname":"m1","port":-1,"pid":"x@y"}`))
	f.Add([]byte(`{"address":{"hostname":"m\u000b1","port":5050}}`))
	f.Add([]byte(`{"address":{"hostname":"m\u00a01","port":5050}}`))
	f.Add([]byte(`{"pid":"master@m\u00001:5050"}`))
	f.Add([]byte(`{"address":{"hostname":"m1\u200b","port":5050}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		mi, err := decodeMasterInfo(data)
		if err != nil {
			return
		}
		hp, err := mi.HostPort()
		if err != nil {
			return
		}
		if !validPort(hp, true) {
			t.Fatalf("HostPort of %s = %q: not a usable host:port", data, hp)
		}
	})
}
