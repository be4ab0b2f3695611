package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query strings are read as strictly as bodies: every route names the
// parameters it takes, and CheckQuery refuses anything else — a parameter
// the route does not take, one given twice that takes one value, a
// malformed escape, a semicolon separator, a name or value that is not
// valid UTF-8 or holds a control character (NUL included: PostgreSQL
// cannot store it, and a filter holding one answered 500) — with a 400
// naming the parameter, before the route's own parser sees the values.

// MaxQueryBytes is the longest query string accepted.
const MaxQueryBytes = 8192

// MaxQueryValueBytes is the longest value of one parameter.
const MaxQueryValueBytes = 1024

// QueryParam is a parameter a route takes.
type QueryParam struct {
	Name string
	// Multi lets the parameter be given more than once (state=A&state=B).
	Multi bool
}

// QueryError is a refused query string; Field names the parameter ("" when
// the query string as a whole is malformed).
type QueryError struct {
	Field string
	Msg   string
}

func (e *QueryError) Error() string { return e.Msg }

// CheckQuery parses a raw query string against the parameters a route
// takes. It returns the values, or a *QueryError.
func CheckQuery(raw string, params []QueryParam) (url.Values, error) {
	out := url.Values{}
	if raw == "" {
		return out, nil
	}
	if len(raw) > MaxQueryBytes {
		return nil, &QueryError{Msg: fmt.Sprintf("the query string is longer than %d bytes", MaxQueryBytes)}
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	takes := "takes no query parameters"
	if len(names) > 0 {
		takes = "takes only " + strings.Join(names, ", ")
	}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		if strings.Contains(part, ";") {
			return nil, &QueryError{Msg: "a semicolon does not separate query parameters; use &"}
		}
		rawKey, rawVal, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || !cleanQueryText(key) || key == "" || len(key) > 64 {
			return nil, &QueryError{Msg: fmt.Sprintf("query parameter name %q is not a parameter name (this route %s)", printable(rawKey), takes)}
		}
		var p *QueryParam
		for i := range params {
			if params[i].Name == key {
				p = &params[i]
			}
		}
		if p == nil {
			return nil, &QueryError{Field: key, Msg: fmt.Sprintf("unknown query parameter %q (this route %s)", key, takes)}
		}
		val, err := url.QueryUnescape(rawVal)
		if err != nil {
			return nil, &QueryError{Field: key, Msg: fmt.Sprintf("%s: %q is not valid percent-encoding", key, printable(rawVal))}
		}
		if !cleanQueryText(val) {
			return nil, &QueryError{Field: key, Msg: fmt.Sprintf("%s must be valid UTF-8 without control characters (such as NUL)", key)}
		}
		if len(val) > MaxQueryValueBytes {
			return nil, &QueryError{Field: key, Msg: fmt.Sprintf("%s is longer than %d bytes", key, MaxQueryValueBytes)}
		}
		if _, seen := out[key]; seen && !p.Multi {
			return nil, &QueryError{Field: key, Msg: fmt.Sprintf("%s is given more than once; give it once", key)}
		}
		out[key] = append(out[key], val)
	}
	return out, nil
}

// cleanQueryText is valid UTF-8 without control characters.
func cleanQueryText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// printable shows at most 40 bytes of raw query text, with anything that
// is not printable ASCII escaped, for an error message.
func printable(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// Each route's parameters.
var (
	noParams      = []QueryParam{}
	listJobParams = []QueryParam{{Name: "state", Multi: true}, {Name: "label", Multi: true}, {Name: "limit"}, {Name: "cursor"}, {Name: "q"}, {Name: "team"}}
	clusterParams = []QueryParam{{Name: "limit"}, {Name: "cursor"}, {Name: "state"}}
	queuesParams  = []QueryParam{{Name: "limit"}, {Name: "cursor"}}
	eventParams   = []QueryParam{{Name: "ticket"}}
	logParams     = []QueryParam{{Name: "file"}, {Name: "offset"}, {Name: "length"}, {Name: "attempt"}}
)

// withQuery runs h only for a request whose query string CheckQuery
// accepts for params; the request's URL then holds the values as checked.
func withQuery(params []QueryParam, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := CheckQuery(r.URL.RawQuery, params); err != nil {
			qe := err.(*QueryError)
			writeError(w, http.StatusBadRequest, qe.Field, qe.Msg)
			return
		}
		h(w, r)
	}
}

// WithQuery is withQuery for routes mounted from other packages (serve's
// /metrics): h runs only when the query string holds nothing but params.
func WithQuery(params []QueryParam, h http.Handler) http.Handler {
	return withQuery(params, h.ServeHTTP)
}
