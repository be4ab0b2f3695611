package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/store"
)

// Listener names (the "listener" label of the refused-requests metric).
const (
	ListenerAPI       = "api"
	ListenerSparkREST = "spark-rest"
)

// Refusal reasons (the "reason" label of sparkpack_requests_refused_total).
const (
	RefusedNoCredentials  = "no_credentials"        // 401: no Authorization header
	RefusedMalformed      = "malformed_credentials" // 401: not "Bearer <token>"
	RefusedUnknownToken   = "unknown_token"         // 403: no such token
	RefusedScope          = "missing_scope"         // 403: the token lacks the scope
	RefusedAddress        = "address_not_allowed"   // 403: tokenless, outside --spark-rest-allow
	RefusedNotOwner       = "not_owner"             // 403: cancel of another token's job
	RefusedRateLimited    = "rate_limited"          // 429: per-token / per-address rate
	RefusedTooManyWaiting = "too_many_waiting"      // 429: --max-waiting-per-token
	RefusedBadTicket      = "bad_ticket"            // 401: an event stream ticket unknown, used or expired
)

// AllowlistName is the name requests admitted by --spark-rest-allow act
// under (in job events, for --max-waiting-per-token and for cancelling:
// such a client may kill what allowlisted clients submitted).
const AllowlistName = "spark-rest-allow"

// allowlistScopes is what an allowlisted address may do without a token.
const allowlistScopes = ScopeSubmit | ScopeCancel | ScopeRead

// Principal is who a request acts as.
type Principal struct {
	// Name is the token's name, AllowlistName, or "" when no tokens are
	// configured (or for an open read).
	Name   string
	Scopes Scope
	// Via is how it was admitted: "token", "allowlist" or "open".
	Via string
	// Addr is the client's IP address.
	Addr string
	// Listener is where the request came in (ListenerAPI or ListenerSparkREST).
	Listener string
	// Team is the token's team from the tokens file ("" none).
	Team string
}

// OwnOnly reports whether the principal may cancel only the jobs it submitted.
func (p Principal) OwnOnly() bool { return p.Via != "open" && p.Scopes&ScopeAdmin == 0 }

type principalKey struct{}

// PrincipalFrom returns the principal Guard.Check admitted the request as.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// AuthNote collects, for an access log line, who a request acted as and
// why it was refused.
type AuthNote struct {
	Principal string
	Refused   string
}

type authNoteKey struct{}

// WithAuthNote returns r with an empty note that Guard.Check fills in.
func WithAuthNote(r *http.Request) (*http.Request, *AuthNote) {
	n := &AuthNote{}
	return r.WithContext(context.WithValue(r.Context(), authNoteKey{}, n)), n
}

func noteFrom(ctx context.Context) *AuthNote {
	n, _ := ctx.Value(authNoteKey{}).(*AuthNote)
	return n
}

// Refusal is why a request was not admitted, for the listener to answer
// in its own format.
type Refusal struct {
	Status  int
	Reason  string
	Field   string
	Message string
	// RetryAfter, when set, goes into Retry-After (429).
	RetryAfter time.Duration
	// Challenge, when set, goes into WWW-Authenticate (401).
	Challenge string
}

// SetHeaders sets WWW-Authenticate and Retry-After as the refusal needs.
func (rf *Refusal) SetHeaders(h http.Header) {
	if rf.Challenge != "" {
		h.Set("WWW-Authenticate", rf.Challenge)
	}
	if rf.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(rf.RetryAfter)))
	}
}

// Guard is the access policy both listeners share.
//
// With no tokens configured everything is open, except that mutating Spark
// REST requests must come from SparkAllow when it is set. With tokens:
// mutating requests (and reads under ProtectReads) need a bearer token
// whose scopes allow them; on the Spark REST listener, whose stock client
// (Spark 3.5's RestSubmissionClient) cannot send a token, a request without
// Authorization from an address in SparkAllow is admitted as AllowlistName
// with submit, cancel and read. A request that presents a credential is
// judged by it, wherever it comes from.
//
// Mutating requests are rate limited by Limiter per token name (per client
// address when there is no token), and failed credentials per address: an
// address that keeps presenting bad tokens is answered 429 before its
// tokens are even checked.
type Guard struct {
	Tokens       *Tokens
	ProtectReads bool
	// SparkAllow lists the client networks the Spark REST listener admits
	// without a token (--spark-rest-allow).
	SparkAllow []netip.Prefix
	// Limiter, if set, limits mutating requests and failed credentials.
	Limiter *Limiter
	// Refused, if set, is told about every refused request (metrics).
	Refused func(listener, reason string)
}

// ParseAllowlist reads --spark-rest-allow: comma-separated CIDRs or
// addresses (an address is its own /32 or /128). "none" is an empty list
// given on purpose: only requests with a token are admitted.
func ParseAllowlist(s string) ([]netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or fd00::/8", item)
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// Client addresses are compared unmapped (clientAddr), so
				// ::ffff:10.0.0.0/104 is 10.0.0.0/8: kept mapped it never
				// matched, and the network was refused.
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a CIDR such as 10.0.0.0/8", item)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// clientAddr is the request's peer address. X-Forwarded-For is not
// trusted: put no proxy in front that hides the client, or allow the
// proxy's address only.
func clientAddr(r *http.Request) (netip.Addr, string) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, r.RemoteAddr
	}
	a := ap.Addr().Unmap().WithZone("")
	return a, a.String()
}

// addrKey is the rate-limit key of an address: the address for IPv4, its
// /64 for IPv6 (one host usually has the whole /64).
func addrKey(a netip.Addr, fallback string) string {
	if !a.IsValid() {
		return "addr:" + fallback
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "addr:" + p.String()
	}
	return "addr:" + a.String()
}

func (g *Guard) inAllowlist(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range g.SparkAllow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// mutating reports whether need changes state (and so is rate limited).
func mutating(need Scope) bool { return need&(ScopeSubmit|ScopeCancel|ScopeAdmin) != 0 }

// Check decides whether r may do what need asks on listener. Admitted, it
// returns r with the Principal and the store.Actor (for job events) in its
// context; refused, it returns the refusal (already counted) for the
// caller to answer.
func (g *Guard) Check(r *http.Request, listener string, need Scope) (*http.Request, *Refusal) {
	return g.check(r, listener, need, false)
}

// CheckIdentified is Check for a read whose answer depends on who asks (a
// preview: the job's team is the token's, as a submission's is). Where
// reads are open a request that sends a token is admitted with that
// token's principal (a token that is not allowed is refused, as a
// submission with it would be); one without a token is admitted as Check
// admits it.
func (g *Guard) CheckIdentified(r *http.Request, listener string, need Scope) (*http.Request, *Refusal) {
	return g.check(r, listener, need, true)
}

func (g *Guard) check(r *http.Request, listener string, need Scope, identify bool) (*http.Request, *Refusal) {
	addr, addrText := clientAddr(r)
	p, rf := g.admit(r, listener, need, addr, addrText, identify)
	if rf == nil && mutating(need) {
		key := addrKey(addr, addrText)
		if p.Via == "token" {
			key = "token:" + p.Name
		}
		if ok, wait := g.Limiter.Allow(key); !ok {
			who := "this token"
			if p.Via != "token" {
				who = "this address"
			}
			rf = &Refusal{Status: http.StatusTooManyRequests, Reason: RefusedRateLimited, RetryAfter: wait,
				Message: fmt.Sprintf("too many requests from %s; retry after %ds", who, retryAfterSeconds(wait))}
		}
	}
	if rf != nil {
		g.Count(r, listener, rf.Reason)
		return r, rf
	}
	if n := noteFrom(r.Context()); n != nil {
		n.Principal = p.Name
		if p.Name == "" {
			n.Principal = "(" + p.Via + ")"
		}
	}
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	ctx = store.WithActor(ctx, store.Actor{Name: p.Name, Client: p.Addr, OwnOnly: p.OwnOnly()})
	return r.WithContext(ctx), nil
}

// Count records a refusal decided elsewhere (the waiting cap, a cancel of
// another token's job) in the metric and the access log note.
func (g *Guard) Count(r *http.Request, listener, reason string) {
	if g.Refused != nil {
		g.Refused(listener, reason)
	}
	if n := noteFrom(r.Context()); n != nil {
		n.Refused = reason
	}
}

func (g *Guard) admit(r *http.Request, listener string, need Scope, addr netip.Addr, addrText string, identify bool) (Principal, *Refusal) {
	open := Principal{Scopes: AllScopes, Via: "open", Addr: addrText, Listener: listener}
	spark := listener == ListenerSparkREST
	if g.Tokens.Len() == 0 {
		if spark && mutating(need) && len(g.SparkAllow) > 0 && !g.inAllowlist(addr) {
			return open, &Refusal{Status: http.StatusForbidden, Reason: RefusedAddress,
				Message: fmt.Sprintf("this address (%s) is not in sparkpack's --spark-rest-allow list", addrText)}
		}
		return open, nil
	}
	openRead := !mutating(need) && !g.ProtectReads
	if openRead && (!identify || r.Header.Get("Authorization") == "") {
		return open, nil
	}
	failKey := "fail:" + addrKey(addr, addrText)
	h := r.Header.Get("Authorization")
	if h == "" {
		if spark && g.inAllowlist(addr) && allowlistScopes.Allows(need) {
			return Principal{Name: AllowlistName, Scopes: allowlistScopes, Via: "allowlist", Addr: addrText, Listener: listener}, nil
		}
		msg := "a bearer token is required: send the header Authorization: Bearer <token>"
		if spark {
			msg += fmt.Sprintf(", or submit from an address in sparkpack's --spark-rest-allow list (this request came from %s)", addrText)
		}
		return open, &Refusal{Status: http.StatusUnauthorized, Reason: RefusedNoCredentials, Field: "Authorization",
			Challenge: `Bearer realm="sparkpack"`, Message: msg}
	}
	if blocked, wait := g.Limiter.Blocked(failKey); blocked {
		return open, &Refusal{Status: http.StatusTooManyRequests, Reason: RefusedRateLimited, RetryAfter: wait, Field: "Authorization",
			Message: fmt.Sprintf("too many refused credentials from this address; retry after %ds with a valid token", retryAfterSeconds(wait))}
	}
	scheme, token, found := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		g.Limiter.Allow(failKey)
		return open, &Refusal{Status: http.StatusUnauthorized, Reason: RefusedMalformed, Field: "Authorization",
			Challenge: `Bearer realm="sparkpack", error="invalid_request"`, Message: "the Authorization header must be: Bearer <token>"}
	}
	e, ok := g.Tokens.lookup(token)
	if !ok {
		g.Limiter.Allow(failKey)
		return open, &Refusal{Status: http.StatusForbidden, Reason: RefusedUnknownToken, Field: "Authorization",
			Message: "this token is not allowed; ask the operator for a token listed in the tokens file"}
	}
	if !openRead && !e.scopes.Allows(need) {
		return open, &Refusal{Status: http.StatusForbidden, Reason: RefusedScope, Field: "Authorization",
			Message: fmt.Sprintf("token %q may %s but this needs the scope %s; ask the operator to add it to the token's line in the tokens file",
				e.name, e.scopes, need)}
	}
	return Principal{Name: e.name, Scopes: e.scopes, Via: "token", Addr: addrText, Listener: listener, Team: e.team}, nil
}
