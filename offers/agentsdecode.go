package offers

import (
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// A GET_AGENTS answer decoded with only the fields sparkpack reads. On a
// large cluster the answer is megabytes (about 9 MB at 30,000 agents), and
// decoding all of it with mesos-go's generated code was most of serve's
// memory and of its garbage: every agent's offered resources, its
// capabilities and version, its AgentInfo's copy of its resources, its
// unreserved disk and ports. decodeAgents walks the protobuf wire format,
// copies each agent's kept fields into a scratch buffer and decodes that
// with the generated code, so the agents keep their mesos-go types.
//
// Kept of each agent: agent_info (without its resources when the agent
// has total_resources, and without its domain), active, pid,
// registered_time, reregistered_time, deactivated, drain_info, and of
// total_resources and allocated_resources every cpus and mem resource and
// every reserved resource (any name). version, a required field, is kept
// empty.

// Field numbers (mesos/master/master.proto, mesos/mesos.proto of 1.12).
const (
	fResponseGetAgents   = 10 // Response.get_agents
	fGetAgentsAgents     = 1  // Response.GetAgents.agents
	fGetAgentsRecovered  = 2  // Response.GetAgents.recovered_agents (AgentInfo)
	fInfoID              = 6  // AgentInfo.id (AgentID)
	fAgentIDValue        = 1  // AgentID.value
	fAgentInfo           = 1  // Response.GetAgents.Agent.agent_info
	fAgentVersion        = 3  // .version (required)
	fAgentTotal          = 7  // .total_resources
	fAgentAllocated      = 8  // .allocated_resources
	fInfoResources       = 3  // AgentInfo.resources
	fInfoDomain          = 10 // AgentInfo.domain
	fResourceName        = 1  // Resource.name
	fResourceRole        = 6  // Resource.role (deprecated)
	fResourceReservation = 8  // Resource.reservation (deprecated)
	fResourceReservs     = 13 // Resource.reservations
)

// agentKept lists the fields of an agent that are copied (besides
// agent_info and the resources, which are filtered).
var agentKept = map[uint64]bool{2: true, 4: true, 5: true, 6: true, 12: true, 13: true}

const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

var errWire = errors.New("malformed protobuf")

// wireField is one field of a message: its number, wire type, the bytes
// of its value (for wireBytes, the payload without the length) and the
// whole field as encoded.
type wireField struct {
	num   uint64
	typ   int
	value []byte
	raw   []byte
}

func readVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errWire
}

// nextField reads the field at the start of b.
func nextField(b []byte) (wireField, []byte, error) {
	key, n, err := readVarint(b)
	if err != nil {
		return wireField{}, nil, err
	}
	f := wireField{num: key >> 3, typ: int(key & 7)}
	rest := b[n:]
	var size int
	switch f.typ {
	case wireVarint:
		_, m, err := readVarint(rest)
		if err != nil {
			return wireField{}, nil, err
		}
		f.value, size = rest[:m], m
	case wire64:
		if len(rest) < 8 {
			return wireField{}, nil, errWire
		}
		f.value, size = rest[:8], 8
	case wire32:
		if len(rest) < 4 {
			return wireField{}, nil, errWire
		}
		f.value, size = rest[:4], 4
	case wireBytes:
		l, m, err := readVarint(rest)
		if err != nil || l > uint64(len(rest)-m) {
			return wireField{}, nil, errWire
		}
		f.value, size = rest[m:m+int(l)], m+int(l)
	default:
		return wireField{}, nil, fmt.Errorf("%w: wire type %d", errWire, f.typ)
	}
	f.raw = b[:n+size]
	return f, rest[size:], nil
}

// eachField calls fn for every field of the message b.
func eachField(b []byte, fn func(wireField) error) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendBytesField appends field num (wire type bytes) holding v.
func appendBytesField(b []byte, num uint64, v []byte) []byte {
	b = appendVarint(b, num<<3|wireBytes)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// decodeAgents decodes the agents of a protobuf GET_AGENTS answer (a
// master.Response), keeping only the fields sparkpack reads.
func decodeAgents(resp []byte) ([]master.Response_GetAgents_Agent, error) {
	agents, _, _, err := decodeAgentsReusing(resp, nil)
	return agents, err
}

// sumSeed seeds the sums that tell an agent's kept fields unchanged.
var sumSeed = maphash.MakeSeed()

// decodeAgentsReusing is decodeAgents that decodes only the agents whose
// kept fields changed since the answer prev was made from: an agent whose
// kept fields are byte for byte (by a 64-bit sum) those of an agent of
// prev is that agent, shared. It returns each agent's sum (same sum, same
// agent) and what the next call reuses. Between two GET_AGENTS of a large
// cluster only the agents where something was reserved, launched or
// ended change: a few hundred of tens of thousands.
func decodeAgentsReusing(resp []byte, prev map[uint64]master.Response_GetAgents_Agent) ([]master.Response_GetAgents_Agent, []uint64, map[uint64]master.Response_GetAgents_Agent, error) {
	var body []byte
	found := false
	err := eachField(resp, func(f wireField) error {
		if f.num == fResponseGetAgents && f.typ == wireBytes {
			body, found = f.value, true
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if !found {
		return nil, nil, nil, errors.New("no get_agents in the answer")
	}
	n := 0
	if err := eachField(body, func(f wireField) error {
		if f.num == fGetAgentsAgents && f.typ == wireBytes {
			n++
		}
		return nil
	}); err != nil {
		return nil, nil, nil, err
	}
	out := make([]master.Response_GetAgents_Agent, 0, n)
	sums := make([]uint64, 0, n)
	next := make(map[uint64]master.Response_GetAgents_Agent, n)
	var scratch, info []byte
	err = eachField(body, func(f wireField) error {
		if f.num != fGetAgentsAgents || f.typ != wireBytes {
			return nil // recovered agents: decodeRecovered
		}
		scratch, info = scratch[:0], info[:0]
		var err error
		if scratch, info, err = slimAgent(scratch, info, f.value); err != nil {
			return err
		}
		sum := maphash.Bytes(sumSeed, scratch)
		a, ok := prev[sum]
		if !ok {
			if err := a.Unmarshal(scratch); err != nil {
				return fmt.Errorf("agent %d: %w", len(out)+1, err)
			}
		}
		out, sums, next[sum] = append(out, a), append(sums, sum), a
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out, sums, next, nil
}

// decodeRecovered returns the ids of the agents a protobuf GET_AGENTS
// answer lists in recovered_agents: a master that failed over (a real
// one, with its registry) lists there the agents of its registry that
// have not re-registered with it yet, for up to agent_reregister_timeout
// (10 minutes by default), and not in agents. Such an agent has not left
// Mesos; it may be re-registering (docs/power.md).
func decodeRecovered(resp []byte) ([]string, error) {
	var ids []string
	err := eachField(resp, func(f wireField) error {
		if f.num != fResponseGetAgents || f.typ != wireBytes {
			return nil
		}
		return eachField(f.value, func(f wireField) error {
			if f.num != fGetAgentsRecovered || f.typ != wireBytes {
				return nil
			}
			id := ""
			err := eachField(f.value, func(f wireField) error {
				if f.num != fInfoID || f.typ != wireBytes {
					return nil
				}
				return eachField(f.value, func(f wireField) error {
					if f.num == fAgentIDValue && f.typ == wireBytes {
						id = string(f.value)
					}
					return nil
				})
			})
			if err != nil {
				return err
			}
			if id == "" {
				return fmt.Errorf("recovered agent %d: no id", len(ids)+1)
			}
			ids = append(ids, id)
			return nil
		})
	})
	return ids, err
}

// slimAgent appends to dst the kept fields of one encoded agent; info is
// scratch space for its agent_info.
func slimAgent(dst, info, agent []byte) ([]byte, []byte, error) {
	hasTotal := false
	var infoRaw []byte
	err := eachField(agent, func(f wireField) error {
		switch {
		case f.num == fAgentInfo && f.typ == wireBytes:
			infoRaw = f.value
		case f.num == fAgentTotal:
			hasTotal = true
		}
		return nil
	})
	if err != nil {
		return dst, info, err
	}
	if infoRaw != nil {
		err := eachField(infoRaw, func(f wireField) error {
			if f.num == fInfoDomain || (f.num == fInfoResources && hasTotal) {
				return nil
			}
			info = append(info, f.raw...)
			return nil
		})
		if err != nil {
			return dst, info, err
		}
		dst = appendBytesField(dst, fAgentInfo, info)
	}
	dst = appendBytesField(dst, fAgentVersion, nil)
	err = eachField(agent, func(f wireField) error {
		switch {
		case f.num == fAgentTotal || f.num == fAgentAllocated:
			keep, err := keptResource(f.value)
			if err != nil {
				return err
			}
			if keep {
				dst = append(dst, f.raw...)
			}
		case agentKept[f.num]:
			dst = append(dst, f.raw...)
		}
		return nil
	})
	return dst, info, err
}

// keptResource: cpus and mem, and every reserved resource.
func keptResource(res []byte) (bool, error) {
	keep := false
	err := eachField(res, func(f wireField) error {
		switch f.num {
		case fResourceName:
			if s := string(f.value); s == "cpus" || s == "mem" {
				keep = true
			}
		case fResourceReservation, fResourceReservs:
			keep = true
		case fResourceRole:
			if s := string(f.value); s != "*" && s != "" {
				keep = true
			}
		}
		return nil
	})
	return keep, err
}
