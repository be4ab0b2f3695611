package api

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Tokens is a set of accepted bearer tokens, kept as SHA-256 digests so
// that comparisons take constant time and no token sits in memory dumps
// verbatim longer than needed.
type Tokens struct {
	digests [][32]byte
}

// ParseTokens reads one token per line; blank lines and lines starting
// with # are skipped. Tokens must be at least 16 characters.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if len(s) < 16 || strings.ContainsAny(s, " \t") {
			return nil, fmt.Errorf("line %d: a token must be at least 16 characters without spaces", line)
		}
		t.digests = append(t.digests, sha256.Sum256([]byte(s)))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.digests) == 0 {
		return nil, fmt.Errorf("no tokens found (one token per line)")
	}
	return t, nil
}

// LoadTokens reads tokens from a file, or from a comma-separated list when
// the file name is empty and list is not. It returns nil (no auth) when
// both are empty.
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
		t, err := ParseTokens(strings.NewReader(strings.ReplaceAll(list, ",", "\n")))
		if err != nil {
			return nil, fmt.Errorf("SPARKPACK_TOKENS: %w", err)
		}
		return t, nil
	}
	return nil, nil
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.digests)
}

func (t *Tokens) valid(token string) bool {
	d := sha256.Sum256([]byte(token))
	ok := 0
	for _, x := range t.digests {
		ok |= subtle.ConstantTimeCompare(d[:], x[:])
	}
	return ok == 1
}

// authorize checks the bearer token when tokens are configured: a missing
// token is 401, an unknown one 403. It returns false after answering.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Tokens.Len() == 0 {
		return true
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sparkpack"`)
		writeError(w, http.StatusUnauthorized, "Authorization", "a bearer token is required: send the header Authorization: Bearer <token>")
		return false
	}
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sparkpack", error="invalid_request"`)
		writeError(w, http.StatusUnauthorized, "Authorization", "the Authorization header must be: Bearer <token>")
		return false
	}
	if !s.cfg.Tokens.valid(strings.TrimSpace(token)) {
		writeError(w, http.StatusForbidden, "Authorization", "this token is not allowed; ask the operator for a token listed in the tokens file")
		return false
	}
	return true
}
