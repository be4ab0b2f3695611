package masterdetect

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Spec is a parsed --mesos-master: either a list of masters (Masters) or
// a ZooKeeper location (ZK).
type Spec struct {
	// Scheme is "http" or "https" when the masters were written with one,
	// "" when they were written as host:port (the caller chooses).
	Scheme string
	// Masters are the masters' host:port, in the order given.
	Masters []string
	// ZK is set for a zk:// address.
	ZK *ZKSpec
}

// ZKSpec is where the Mesos masters elect their leader in ZooKeeper.
type ZKSpec struct {
	// Servers are the ZooKeeper servers' host:port.
	Servers []string
	// Path is the znode the masters use (Mesos' --zk path), e.g. /mesos.
	Path string
	// Auth, if set, is "user:password" for ZooKeeper's digest scheme.
	Auth string
}

// Forms lists the accepted forms, for error messages and help.
const Forms = "host:port, http(s)://host:port, a list host1:5050,host2:5050, or zk://zk1:2181,zk2:2181/mesos"

// Parse reads a --mesos-master value.
func Parse(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("no Mesos master address (set --mesos-master: " + Forms + ")")
	}
	if rest, ok := strings.CutPrefix(s, "zk://"); ok {
		z, err := parseZK(rest)
		if err != nil {
			return Spec{}, fmt.Errorf("Mesos master %q: %w (want zk://zk1:2181,zk2:2181/mesos, the masters' --zk)", s, err)
		}
		return Spec{ZK: &z}, nil
	}
	var sp Spec
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return Spec{}, fmt.Errorf("Mesos master %q: entry %d is empty; write masters as host1:5050,host2:5050", s, i+1)
		}
		scheme, host := "", entry
		if strings.Contains(entry, "://") {
			u, err := url.Parse(entry)
			if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
				if u != nil && u.Scheme == "zk" {
					return Spec{}, fmt.Errorf("Mesos master %q: a zk:// address must be the whole value (zk://zk1:2181,zk2:2181/mesos), not one of a list", s)
				}
				return Spec{}, fmt.Errorf("Mesos master %q: want %s", entry, Forms)
			}
			scheme, host = u.Scheme, u.Host
		}
		if strings.ContainsAny(host, "/?#@ ") {
			return Spec{}, fmt.Errorf("Mesos master %q: want %s", entry, Forms)
		}
		if unusableHost(host) {
			return Spec{}, fmt.Errorf("Mesos master %q: the host holds white space, a control or invisible character or invalid UTF-8 (a typo?); want %s", entry, Forms)
		}
		if _, _, err := net.SplitHostPort(host); err != nil && strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
			return Spec{}, fmt.Errorf("Mesos master %q: %w (want %s)", entry, err, Forms)
		}
		if err := checkPort(host); err != nil {
			return Spec{}, fmt.Errorf("Mesos master %q: %w", entry, err)
		}
		if i > 0 && scheme != sp.Scheme {
			return Spec{}, fmt.Errorf("Mesos master %q: every master of the list must use the same scheme (all http://, all https:// or none)", s)
		}
		sp.Scheme = scheme
		sp.Masters = append(sp.Masters, host)
	}
	return sp, nil
}

func parseZK(rest string) (ZKSpec, error) {
	hosts, path, ok := strings.Cut(rest, "/")
	if !ok || strings.Trim(path, "/") == "" {
		return ZKSpec{}, errors.New("no znode path")
	}
	var z ZKSpec
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		z.Auth, hosts = hosts[:at], hosts[at+1:]
		if !strings.Contains(z.Auth, ":") {
			return ZKSpec{}, errors.New("ZooKeeper credentials must be user:password")
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return ZKSpec{}, errors.New("an empty ZooKeeper server")
		}
		if unusableHost(h) {
			return ZKSpec{}, fmt.Errorf("ZooKeeper server %q holds white space, a control or invisible character or invalid UTF-8 (a typo?)", h)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), "2181")
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			return ZKSpec{}, fmt.Errorf("ZooKeeper server %q: %w", h, err)
		}
		if err := checkPort(h); err != nil {
			return ZKSpec{}, fmt.Errorf("ZooKeeper server %q: %w", h, err)
		}
		z.Servers = append(z.Servers, h)
	}
	z.Path = "/" + strings.Trim(path, "/")
	if strings.ContainsFunc(z.Path, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return ZKSpec{}, fmt.Errorf("znode path %q holds white space or a control character (a typo? the masters' --zk path is like /mesos)", z.Path)
	}
	if !validZnodePath(z.Path) {
		return ZKSpec{}, fmt.Errorf("znode path %q is not one ZooKeeper takes (an empty, . or .. node, or a reserved character; the masters' --zk path is like /mesos)", z.Path)
	}
	return z, nil
}

// validZnodePath reports whether ZooKeeper takes p (its client refuses
// the others with ErrInvalidPath, so the watcher would retry forever):
// no empty, "." or ".." node (zk://zk1/mesos//x), no character of the
// private use area or U+FFF0-U+FFFF. p starts with '/' and does not end
// with one.
func validZnodePath(p string) bool {
	for _, n := range strings.Split(p[1:], "/") {
		if n == "" || n == "." || n == ".." {
			return false
		}
	}
	return utf8.ValidString(p) && !strings.ContainsFunc(p, func(r rune) bool { return r >= 0xe000 && r <= 0xf8ff || r >= 0xfff0 && r <= 0xffff })
}

// unusableHost reports whether a host (or host:port) holds what no
// resolver takes: white space, a control or invisible format character
// (a zero-width space), invalid UTF-8 (m\v1, a no-break space): it would
// be dialled, fail and be retried forever.
func unusableHost(h string) bool {
	return !utf8.ValidString(h) || strings.ContainsFunc(h, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	})
}

// checkPort refuses a host:port whose port is not a number from 1 to
// 65535 (m1:50x0, zk1:, zk1:99999: a typo that would otherwise be dialled
// and retried forever); a host without a port passes.
func checkPort(hostport string) error {
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// String writes the spec back, without ZooKeeper credentials.
func (s Spec) String() string {
	if s.ZK != nil {
		return s.ZK.String()
	}
	out := make([]string, len(s.Masters))
	for i, m := range s.Masters {
		if s.Scheme != "" {
			m = s.Scheme + "://" + m
		}
		out[i] = m
	}
	return strings.Join(out, ",")
}

// String is zk://servers/path without credentials.
func (z ZKSpec) String() string {
	return "zk://" + strings.Join(z.Servers, ",") + z.Path
}

// URL is zk://[auth@]servers/path: what Mesos' own clients (a Spark
// driver's mesos:// master URL) accept.
func (z ZKSpec) URL() string {
	auth := ""
	if z.Auth != "" {
		auth = z.Auth + "@"
	}
	return "zk://" + auth + strings.Join(z.Servers, ",") + z.Path
}
