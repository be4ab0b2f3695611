package api

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/sparkpack/sparkpack/teams"
)

// Scope is a set of permissions a token carries.
type Scope uint8

// The scopes. Admin implies all others; read implies metrics.
const (
	// ScopeSubmit: POST /api/v1/jobs and the Spark REST create.
	ScopeSubmit Scope = 1 << iota
	// ScopeCancel: DELETE /api/v1/jobs/{id} and the Spark REST kill, of
	// the jobs this token submitted.
	ScopeCancel
	// ScopeRead: every GET when --protect-reads is set (and /metrics).
	ScopeRead
	// ScopeMetrics: GET /metrics only (a Prometheus scrape token).
	ScopeMetrics
	// ScopeAdmin: everything, including cancelling any token's jobs.
	ScopeAdmin
)

// AllScopes is what a token without scopes (a bare line of the tokens
// file) may do: everything, as before scopes existed.
const AllScopes = ScopeSubmit | ScopeCancel | ScopeRead | ScopeMetrics | ScopeAdmin

var scopeNames = []struct {
	name  string
	scope Scope
}{{"submit", ScopeSubmit}, {"cancel", ScopeCancel}, {"read", ScopeRead}, {"metrics", ScopeMetrics}, {"admin", ScopeAdmin}}

// ParseScopes reads a comma-separated scope list such as "submit,cancel".
func ParseScopes(list string) (Scope, error) {
	var s Scope
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, sn := range scopeNames {
			if sn.name == name {
				s |= sn.scope
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown scope %q (use submit, cancel, read, metrics or admin, separated by commas)", name)
		}
	}
	return s, nil
}

func (s Scope) String() string {
	var names []string
	for _, sn := range scopeNames {
		if s&sn.scope != 0 {
			names = append(names, sn.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// Allows reports whether a holder of s may do what need asks.
func (s Scope) Allows(need Scope) bool {
	if s&ScopeAdmin != 0 {
		return true
	}
	if need == ScopeMetrics && s&ScopeRead != 0 {
		return true
	}
	return need != 0 && s&need == need
}

// MinTokenLength is the shortest token accepted.
const MinTokenLength = 16

var tokenNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// scopeListRE is what the third field of a name:token:scopes line looks
// like (a bare token never ends like this in practice).
var scopeListRE = regexp.MustCompile(`^[a-z]+(,[a-z]+)*$`)

type tokenEntry struct {
	name   string
	scopes Scope
	// team is the team the token's jobs count against ("" none: a job's
	// "team" label names it).
	team   string
	digest [32]byte
}

// Tokens is the set of accepted bearer tokens, kept as SHA-256 digests so
// that comparisons take constant time and no token sits in memory dumps
// verbatim longer than needed. Each token has a name (what the logs and
// the job events show; never the token) and scopes.
type Tokens struct {
	// mu guards entries and warnings: Replace swaps them on a reload
	// (SIGHUP) while requests look tokens up.
	mu       sync.RWMutex
	entries  []tokenEntry
	warnings []string
}

// Replace puts the tokens of n in force in place of t's (a reload of the
// tokens file): requests already checked keep their answer, the next ones
// see n. n itself is left as it was.
func (t *Tokens) Replace(n *Tokens) {
	n.mu.RLock()
	entries, warnings := n.entries, n.warnings
	n.mu.RUnlock()
	t.mu.Lock()
	t.entries, t.warnings = entries, warnings
	t.mu.Unlock()
}

// ParseTokens reads a tokens file. Each line is either
//
//	name:token:scope,scope,...   a named token with scopes, e.g. ci:3f9a...:submit,cancel,read
//	name:token:scopes:team       the same, whose jobs belong to a team, e.g. etl:3f9a...:submit,cancel:analytics
//	token                        a bare token (the old format): every scope, named token-<8 hex digits of its SHA-256>
//
// Blank lines and lines starting with # are skipped. Tokens must be at
// least 16 characters without spaces; names are letters, digits, '.',
// '_' and '-' (at most 64); names and tokens must be unique; team names
// are written like token names.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	names := map[string]int{}
	digests := map[[32]byte]int{}
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		e, warn, err := parseTokenLine(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if warn != "" {
			t.warnings = append(t.warnings, fmt.Sprintf("tokens line %d: %s", line, warn))
		}
		if prev, dup := digests[e.digest]; dup {
			return nil, fmt.Errorf("line %d: the same token is on line %d; give every client its own token", line, prev)
		}
		if prev, dup := names[e.name]; dup {
			return nil, fmt.Errorf("line %d: the name %q is used on line %d too; names must be unique", line, e.name, prev)
		}
		digests[e.digest], names[e.name] = line, line
		t.entries = append(t.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.entries) == 0 {
		return nil, fmt.Errorf("no tokens found (one a line: name:token:scopes, or a bare token)")
	}
	return t, nil
}

func parseTokenLine(s string) (tokenEntry, string, error) {
	if parts := strings.Split(s, ":"); (len(parts) == 3 || len(parts) == 4) && tokenNameRE.MatchString(parts[0]) && scopeListRE.MatchString(parts[2]) {
		scopes, err := ParseScopes(parts[2])
		if err != nil {
			return tokenEntry{}, "", err
		}
		if err := checkToken(parts[1]); err != nil {
			return tokenEntry{}, "", fmt.Errorf("token %q: %w", parts[0], err)
		}
		e := tokenEntry{name: parts[0], scopes: scopes, digest: sha256.Sum256([]byte(parts[1]))}
		if len(parts) == 4 {
			if !teams.NameRE.MatchString(parts[3]) {
				return tokenEntry{}, "", fmt.Errorf("token %q: the team name is letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", parts[0])
			}
			e.team = parts[3]
		}
		return e, "", nil
	}
	if err := checkToken(s); err != nil {
		return tokenEntry{}, "", err
	}
	d := sha256.Sum256([]byte(s))
	e := tokenEntry{name: "token-" + hex.EncodeToString(d[:4]), scopes: AllScopes, digest: d}
	warn := ""
	if strings.Contains(s, ":") {
		warn = "taken as one bare token with every scope (the whole line is the token); to name it and limit it, write name:token:scopes, e.g. ci:TOKEN:submit,cancel"
	}
	return e, warn, nil
}

func checkToken(s string) error {
	// No space and no control character: an HTTP client cannot send one
	// in its Authorization header (a token with \v or NUL was accepted,
	// and could never be presented).
	if len(s) < MinTokenLength || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("a token must be at least %d characters without spaces or control characters", MinTokenLength)
	}
	return nil
}

// LoadTokens reads tokens from a file, or from a comma-separated list when
// the file name is empty and list is not (SPARKPACK_TOKENS; scopes inside
// an entry keep their commas: a:TOKEN:submit,read,b:TOKEN2:admin). It
// returns nil (no auth) when both are empty.
func LoadTokens(file, list string) (*Tokens, error) {
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("tokens file: %w", err)
		}
		defer f.Close()
		t, err := ParseTokens(f)
		if err != nil {
			return nil, fmt.Errorf("tokens file %s: %w", file, err)
		}
		return t, nil
	case list != "":
		t, err := ParseTokens(strings.NewReader(strings.Join(splitTokenList(list), "\n")))
		if err != nil {
			return nil, fmt.Errorf("SPARKPACK_TOKENS: %w", err)
		}
		return t, nil
	}
	return nil, nil
}

// splitTokenList splits SPARKPACK_TOKENS at commas, joining a scope name
// (or the last scope name and the team, scope:team) back onto the
// name:token:scopes entry before it (a scope name is too short to be a
// token, so this is unambiguous).
func splitTokenList(list string) []string {
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if n := len(out); n > 0 && strings.Count(out[n-1], ":") == 2 {
			scope, _, _ := strings.Cut(p, ":")
			if _, err := ParseScopes(scope); err == nil {
				out[n-1] += "," + p
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.entries)
}

// Names lists the token names with their scopes, for the start-up log.
func (t *Tokens) Names() []string {
	if t == nil {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.name + " (" + e.scopes.String() + ")"
		if e.team != "" {
			out[i] = e.name + " (" + e.scopes.String() + "; team " + e.team + ")"
		}
	}
	return out
}

// Warnings are remarks about lines that parsed but may not mean what the
// operator intended.
func (t *Tokens) Warnings() []string {
	if t == nil {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.warnings
}

// lookup finds the token's entry, comparing against every digest in
// constant time.
func (t *Tokens) lookup(token string) (tokenEntry, bool) {
	d := sha256.Sum256([]byte(token))
	var found tokenEntry
	ok := 0
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found = e
			ok = 1
		}
	}
	return found, ok == 1
}
