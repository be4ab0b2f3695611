package mesossim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The emulator keeps resources in its own small representation instead of
// mesos.Resources: scalars are fixed point with three decimals (as Mesos
// does), ranges are normalised spans, and a reservation is identified by its
// role, principal and labels (one level, DYNAMIC; no refinement chains).

// rkey identifies one kind of resource: a name plus its reservation (role ""
// means unreserved).
type rkey struct {
	name      string
	role      string
	principal string
	labels    string // canonical encoding, see encodeLabels
}

func (k rkey) reserved() bool { return k.role != "" }

type span struct{ lo, hi uint64 }

// rent is one entry of a Res: either a scalar (milli units) or ranges.
type rent struct {
	k      rkey
	ranges bool
	v      int64 // scalar value in thousandths
	rng    []span
}

// Res is a set of resources. The zero value is empty. Functions never modify
// their receiver in place unless documented.
type Res []rent

const milli = 1000

func toMilli(f float64) int64   { return int64(math.Round(f * milli)) }
func fromMilli(v int64) float64 { return float64(v) / milli }

// encodeLabels returns a canonical (order independent) encoding of labels.
func encodeLabels(l *mesos.Labels) string {
	if l == nil || len(l.Labels) == 0 {
		return ""
	}
	pairs := make([][2]string, 0, len(l.Labels))
	for _, x := range l.Labels {
		pairs = append(pairs, [2]string{x.Key, x.GetValue()})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	b, _ := json.Marshal(pairs)
	return string(b)
}

func decodeLabels(s string) *mesos.Labels {
	if s == "" {
		return nil
	}
	var pairs [][2]string
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil
	}
	out := &mesos.Labels{}
	for _, p := range pairs {
		v := p[1]
		out.Labels = append(out.Labels, mesos.Label{Key: p[0], Value: &v})
	}
	return out
}

func labelsString(s string) string {
	l := decodeLabels(s)
	if l == nil {
		return ""
	}
	parts := make([]string, 0, len(l.Labels))
	for _, x := range l.Labels {
		parts = append(parts, x.Key+": "+x.GetValue())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// ---- spans ----

func normSpans(in []span) []span {
	if len(in) == 0 {
		return nil
	}
	s := append([]span(nil), in...)
	sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo })
	out := []span{s[0]}
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.lo <= last.hi+1 && last.hi != math.MaxUint64 {
			if x.hi > last.hi {
				last.hi = x.hi
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

func spansContain(a, b []span) bool {
	for _, x := range b {
		ok := false
		for _, y := range a {
			if x.lo >= y.lo && x.hi <= y.hi {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func spansSub(a, b []span) []span {
	out := append([]span(nil), a...)
	for _, x := range b {
		var next []span
		for _, y := range out {
			if x.hi < y.lo || x.lo > y.hi {
				next = append(next, y)
				continue
			}
			if x.lo > y.lo {
				next = append(next, span{y.lo, x.lo - 1})
			}
			if x.hi < y.hi {
				next = append(next, span{x.hi + 1, y.hi})
			}
		}
		out = next
	}
	return normSpans(out)
}

func spansCount(a []span) uint64 {
	var n uint64
	for _, x := range a {
		n += x.hi - x.lo + 1
	}
	return n
}

// ---- Res algebra ----

func (r Res) clone() Res {
	out := make(Res, len(r))
	for i, e := range r {
		out[i] = e
		if e.rng != nil {
			out[i].rng = append([]span(nil), e.rng...)
		}
	}
	return out
}

func (r Res) find(k rkey) int {
	for i := range r {
		if r[i].k == k {
			return i
		}
	}
	return -1
}

func (r Res) isEmpty() bool {
	for _, e := range r {
		if (!e.ranges && e.v > 0) || (e.ranges && len(e.rng) > 0) {
			return false
		}
	}
	return true
}

// compact drops empty entries and sorts the entries canonically.
func (r Res) compact() Res {
	out := r[:0:0]
	for _, e := range r {
		if (!e.ranges && e.v > 0) || (e.ranges && len(e.rng) > 0) {
			out = append(out, e)
		}
	}
	// A stable insertion sort: resource lists are short, and this runs
	// for every offer and every agent GET_AGENTS lists.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && keyLess(out[j].k, out[j-1].k); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func keyLess(a, b rkey) bool {
	if a.reserved() != b.reserved() {
		return !a.reserved()
	}
	if a.role != b.role {
		return a.role < b.role
	}
	if a.labels != b.labels {
		return a.labels < b.labels
	}
	if a.principal != b.principal {
		return a.principal < b.principal
	}
	return nameOrder(a.name) < nameOrder(b.name) || (nameOrder(a.name) == nameOrder(b.name) && a.name < b.name)
}

func nameOrder(n string) int {
	switch n {
	case "cpus":
		return 0
	case "mem":
		return 1
	case "disk":
		return 2
	case "ports":
		return 3
	case "gpus":
		return 4
	}
	return 5
}

func (r Res) plus(o Res) Res {
	out := r.clone()
	for _, e := range o {
		i := out.find(e.k)
		if i < 0 {
			c := e
			if e.rng != nil {
				c.rng = append([]span(nil), e.rng...)
			}
			out = append(out, c)
			continue
		}
		if e.ranges {
			out[i].rng = normSpans(append(out[i].rng, e.rng...))
		} else {
			out[i].v += e.v
		}
	}
	return out.compact()
}

// minus subtracts o from r; scalars do not go below zero.
func (r Res) minus(o Res) Res {
	out := r.clone()
	for _, e := range o {
		i := out.find(e.k)
		if i < 0 {
			continue
		}
		if e.ranges {
			out[i].rng = spansSub(out[i].rng, e.rng)
		} else {
			out[i].v -= e.v
			if out[i].v < 0 {
				out[i].v = 0
			}
		}
	}
	return out.compact()
}

func (r Res) contains(o Res) bool {
	for _, e := range o {
		if e.ranges && len(e.rng) == 0 || !e.ranges && e.v == 0 {
			continue
		}
		i := r.find(e.k)
		if i < 0 {
			return false
		}
		if e.ranges {
			if !spansContain(r[i].rng, e.rng) {
				return false
			}
		} else if r[i].v < e.v {
			return false
		}
	}
	return true
}

func (r Res) filter(f func(k rkey) bool) Res {
	var out Res
	for _, e := range r {
		if f(e.k) {
			c := e
			if e.rng != nil {
				c.rng = append([]span(nil), e.rng...)
			}
			out = append(out, c)
		}
	}
	return out
}

func (r Res) unreserved() Res { return r.filter(func(k rkey) bool { return !k.reserved() }) }

func (r Res) reservedFor(role string) Res {
	return r.filter(func(k rkey) bool { return k.role == role })
}

// scalar sums a scalar by name over all reservations (milli units).
func (r Res) scalar(name string) int64 {
	var v int64
	for _, e := range r {
		if e.k.name == name && !e.ranges {
			v += e.v
		}
	}
	return v
}

// stripReservations returns r with every reservation removed (summed).
func (r Res) stripReservations() Res {
	var out Res
	for _, e := range r {
		c := e
		c.k = rkey{name: e.k.name}
		out = out.plus(Res{c})
	}
	return out
}

// withReservation returns r re-keyed to the given reservation.
func (r Res) withReservation(role, principal, labels string) Res {
	var out Res
	for _, e := range r {
		c := e
		c.k = rkey{name: e.k.name, role: role, principal: principal, labels: labels}
		out = out.plus(Res{c})
	}
	return out
}

func fmtScalar(v int64) string {
	return strconv.FormatFloat(fromMilli(v), 'f', -1, 64)
}

// String formats resources the way Mesos prints them in error messages, e.g.
// "cpus:2; mem(reservations: [(DYNAMIC,r,{k: v})]):4096".
func (r Res) String() string {
	r = r.compact()
	if len(r) == 0 {
		return "{}"
	}
	parts := make([]string, 0, len(r))
	for _, e := range r {
		name := e.k.name
		if e.k.reserved() {
			inner := "DYNAMIC," + e.k.role
			if e.k.principal != "" {
				inner += "," + e.k.principal
			}
			if e.k.labels != "" {
				inner += "," + labelsString(e.k.labels)
			}
			name += "(reservations: [(" + inner + ")])"
		}
		var val string
		if e.ranges {
			rs := make([]string, 0, len(e.rng))
			for _, s := range e.rng {
				rs = append(rs, fmt.Sprintf("%d-%d", s.lo, s.hi))
			}
			val = "[" + strings.Join(rs, ", ") + "]"
		} else {
			val = fmtScalar(e.v)
		}
		parts = append(parts, name+":"+val)
	}
	return strings.Join(parts, "; ")
}

// ---- conversion from and to protobuf ----

var errEmptyName = errors.New("Empty resource name")

// parsedRes is the result of parsing protobuf resources.
type parsedRes struct {
	res       Res
	allocRole string // allocation_info.role; "" if absent; "\x00" if mixed
	static    bool   // some resource carries a static reservation
}

// parseResources converts protobuf resources to Res, validating them the way
// Mesos validates resources in calls.
func parseResources(in []mesos.Resource) (parsedRes, error) {
	var p parsedRes
	first := true
	for i := range in {
		x := &in[i]
		if x.Name == "" {
			return p, errEmptyName
		}
		k := rkey{name: x.Name}
		switch {
		case len(x.Reservations) > 1:
			return p, fmt.Errorf("Resource %s uses reservation refinement, which the emulator does not support", x.Name)
		case len(x.Reservations) == 1:
			ri := x.Reservations[0]
			if ri.GetRole() == "" || ri.GetRole() == "*" {
				return p, fmt.Errorf("Invalid reservation role for resource %s", x.Name)
			}
			k.role = ri.GetRole()
			k.principal = ri.GetPrincipal()
			k.labels = encodeLabels(ri.Labels)
			if ri.GetType() == mesos.Resource_ReservationInfo_STATIC {
				p.static = true
			}
		case x.Role != nil && *x.Role != "*" && *x.Role != "":
			k.role = *x.Role
			if x.Reservation != nil {
				k.principal = x.Reservation.GetPrincipal()
				k.labels = encodeLabels(x.Reservation.Labels)
			} else {
				p.static = true
			}
		}
		ar := ""
		if x.AllocationInfo != nil && x.AllocationInfo.Role != nil {
			ar = *x.AllocationInfo.Role
		}
		if first {
			p.allocRole = ar
			first = false
		} else if p.allocRole != ar {
			p.allocRole = "\x00"
		}
		switch x.GetType() {
		case mesos.SCALAR:
			if x.Scalar == nil {
				return p, fmt.Errorf("Invalid scalar resource %s: missing scalar value", x.Name)
			}
			v := x.Scalar.Value
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return p, fmt.Errorf("Invalid scalar resource %s: value must be a non-negative number", x.Name)
			}
			if v > 1e15 {
				return p, fmt.Errorf("Invalid scalar resource %s: value too large", x.Name)
			}
			p.res = p.res.plus(Res{{k: k, v: toMilli(v)}})
		case mesos.RANGES:
			if x.Ranges == nil {
				return p, fmt.Errorf("Invalid ranges resource %s: missing ranges", x.Name)
			}
			var sp []span
			for _, rg := range x.Ranges.Range {
				if rg.Begin > rg.End {
					return p, fmt.Errorf("Invalid ranges resource %s: begin > end", x.Name)
				}
				sp = append(sp, span{rg.Begin, rg.End})
			}
			p.res = p.res.plus(Res{{k: k, ranges: true, rng: normSpans(sp)}})
		case mesos.SET:
			return p, fmt.Errorf("Resource %s: SET resources are not supported by the emulator", x.Name)
		default:
			return p, fmt.Errorf("Invalid resource type for %s", x.Name)
		}
	}
	return p, nil
}

// resFormat selects how reservations are shown in protobuf resources.
type resFormat int

const (
	// fmtLegacy is the pre-RESERVATION_REFINEMENT offer format: "role"
	// ("*" if unreserved) plus a singular "reservation".
	fmtLegacy resFormat = iota
	// fmtRefined is the RESERVATION_REFINEMENT format: only "reservations".
	fmtRefined
	// fmtEndpoint is what operator endpoints show: both formats at once.
	fmtEndpoint
	// fmtBare shows no role at all (agent_info.resources).
	fmtBare
)

// offerOrder orders resources the way the real master lists them in
// offers: ranges (ports) first, then reserved resources, then unreserved
// scalars (cpus, mem, disk). The order matters to frameworks that take
// resources in offer order, as Spark does.
func (r Res) offerOrder() orderedRes {
	c := r.compact()
	var out orderedRes
	for _, e := range c {
		if e.ranges && !e.k.reserved() {
			out = append(out, e)
		}
	}
	for _, e := range c {
		if e.k.reserved() {
			out = append(out, e)
		}
	}
	for _, e := range c {
		if !e.ranges && !e.k.reserved() {
			out = append(out, e)
		}
	}
	return out
}

// orderedRes is a Res whose order is kept when rendered.
type orderedRes []rent

func (o orderedRes) proto(f resFormat, allocRole string) []mesos.Resource {
	return Res(o).protoInOrder(f, allocRole)
}

func (r Res) proto(f resFormat, allocRole string) []mesos.Resource {
	return r.compact().protoInOrder(f, allocRole)
}

func (r Res) protoInOrder(f resFormat, allocRole string) []mesos.Resource {
	out := make([]mesos.Resource, 0, len(r))
	for _, e := range r {
		x := mesos.Resource{Name: e.k.name}
		if e.ranges {
			x.Type = mesos.RANGES.Enum()
			rg := make([]mesos.Value_Range, 0, len(e.rng))
			for _, s := range e.rng {
				rg = append(rg, mesos.Value_Range{Begin: s.lo, End: s.hi})
			}
			x.Ranges = &mesos.Value_Ranges{Range: rg}
		} else {
			x.Type = mesos.SCALAR.Enum()
			x.Scalar = &mesos.Value_Scalar{Value: fromMilli(e.v)}
		}
		if f != fmtBare {
			if e.k.reserved() {
				role := e.k.role
				var principal *string
				if e.k.principal != "" {
					p := e.k.principal
					principal = &p
				}
				if f == fmtLegacy || f == fmtEndpoint {
					x.Role = &role
					x.Reservation = &mesos.Resource_ReservationInfo{Principal: principal, Labels: decodeLabels(e.k.labels)}
				}
				if f == fmtRefined || f == fmtEndpoint {
					t := mesos.Resource_ReservationInfo_DYNAMIC
					rr := role
					x.Reservations = []mesos.Resource_ReservationInfo{{Type: &t, Role: &rr, Principal: principal, Labels: decodeLabels(e.k.labels)}}
				}
			} else if f == fmtLegacy || f == fmtEndpoint {
				star := "*"
				x.Role = &star
			}
			if allocRole != "" {
				ar := allocRole
				x.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &ar}
			}
		}
		out = append(out, x)
	}
	return out
}

// agentResources builds the unreserved resources of a simulated agent.
func agentTotal(cpus, memMB, diskMB float64) Res {
	r := Res{
		{k: rkey{name: "cpus"}, v: toMilli(cpus)},
		{k: rkey{name: "mem"}, v: toMilli(memMB)},
	}
	if diskMB > 0 {
		r = append(r, rent{k: rkey{name: "disk"}, v: toMilli(diskMB)})
	}
	r = append(r, rent{k: rkey{name: "ports"}, ranges: true, rng: []span{{31000, 32000}}})
	return r.compact()
}

// scalarKey is the value (milli) of one exact resource key.
func (r Res) scalarKey(k rkey) int64 {
	if i := r.find(k); i >= 0 && !r[i].ranges {
		return r[i].v
	}
	return 0
}
