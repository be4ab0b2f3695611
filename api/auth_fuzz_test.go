package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// named: the parts of a line make a named token (name:token:scopes, or
// name:token:scopes:team), as parseTokenLine reads them.
func named(parts []string) bool {
	return (len(parts) == 3 || len(parts) == 4) && tokenNameRE.MatchString(parts[0]) && scopeListRE.MatchString(parts[2])
}

// FuzzParseTokens: any tokens file parses or fails cleanly; a parsed
// file's names never contain a token, and every token it accepted is
// found again by lookup with its scopes.
func FuzzParseTokens(f *testing.F) {
	f.Add(authTokens)
	f.Add("ci:ci-token-0123456789abcdef:submit,cancel\n")
	f.Add("a:b:c\n::\n#x\n")
	f.Add("name:token-with:colons-0123456789:read")
	f.Add("etl:tok-0123456789abcdef:submit,cancel:analytics\n")
	f.Add(strings.Repeat("x", 70000))
	f.Add("ci:\vtoken-0123456789abcdef:read\n")
	f.Add("tok\x7fen-0123456789abcdef\n")
	f.Fuzz(func(t *testing.T, file string) {
		tk, err := ParseTokens(strings.NewReader(file))
		if err != nil {
			return
		}
		// Names operators chose (named lines) may be anything, even
		// another line's bare token: only derived names are checked.
		chosen := map[string]bool{}
		for _, line := range strings.Split(file, "\n") {
			if parts := strings.Split(strings.TrimSpace(line), ":"); named(parts) {
				chosen[parts[0]] = true
			}
		}
		for _, line := range strings.Split(file, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			token, bare := line, true
			if parts := strings.Split(line, ":"); named(parts) {
				token, bare = parts[1], false
			}
			e, ok := tk.lookup(token)
			if !ok {
				t.Fatalf("token of line %q not found", line)
			}
			// A client can present it: no control character or space
			// in an Authorization header value.
			for i := 0; i < len(token); i++ {
				if c := token[i]; c <= ' ' || c == 0x7f {
					t.Fatalf("token %q of line %q cannot be sent in a header", token, line)
				}
			}
			if e.scopes == 0 {
				t.Fatalf("token of line %q has no scope", line)
			}
			// A bare token's name is derived from it: it must not show it.
			// (A named token's name is the operator's choice.)
			if bare {
				for _, n := range tk.Names() {
					name, _, _ := strings.Cut(n, " (")
					if !chosen[name] && strings.Contains(name, token) {
						t.Fatalf("name %q shows the token", n)
					}
				}
			}
		}
	})
}

// FuzzGuard: any Authorization header and peer address is admitted or
// refused with 401, 403 or 429, never anything else, and never panics.
func FuzzGuard(f *testing.F) {
	tk, err := ParseTokens(strings.NewReader(authTokens))
	if err != nil {
		f.Fatal(err)
	}
	allow, _ := ParseAllowlist("10.0.0.0/8,::1")
	g := &Guard{Tokens: tk, ProtectReads: true, SparkAllow: allow, Limiter: NewLimiter(1000, 1000)}
	f.Add("Bearer ops-token-0123456789abcdef", "127.0.0.1:1234", true, uint8(1))
	f.Add("", "10.1.2.3:9", true, uint8(2))
	f.Add("bearer  x", "[::1]:80", false, uint8(4))
	f.Add("Basic Zm9vOmJhcg==", "garbage", true, uint8(8))
	f.Fuzz(func(t *testing.T, authz, remote string, spark bool, need uint8) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/jobs", nil)
		r.RemoteAddr = remote
		if authz != "" {
			r.Header["Authorization"] = []string{authz}
		}
		listener := ListenerAPI
		if spark {
			listener = ListenerSparkREST
		}
		r2, rf := g.Check(r, listener, Scope(need)&AllScopes)
		if rf != nil {
			switch rf.Status {
			case 401, 403, 429:
			default:
				t.Fatalf("refusal status %d", rf.Status)
			}
			if rf.Message == "" || rf.Reason == "" {
				t.Fatalf("refusal without message or reason: %+v", rf)
			}
			return
		}
		if _, ok := PrincipalFrom(r2.Context()); !ok {
			t.Fatal("admitted without a principal")
		}
	})
}

// FuzzParseAllowlist: any --spark-rest-allow parses or fails cleanly.
func FuzzParseAllowlist(f *testing.F) {
	f.Add("10.0.0.0/8,192.168.1.7,fd00::/8")
	f.Add("none")
	f.Add("::ffff:1.2.3.4/120")
	f.Add("::ffff:10.0.0.0/104")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseAllowlist(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			// Client addresses are unmapped: a mapped prefix never matches.
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() {
				t.Fatalf("prefix %v from %q", p, s)
			}
		}
	})
}
