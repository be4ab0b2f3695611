package mesossim

import (
	"bytes"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/quota"
	"github.com/sirupsen/logrus"
)

const masterPrefix = "master::Call"

var startTime = time.Now()

func (m *Master) handleOperator(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1" && r.URL.Path != "/api/v1/" && r.URL.Path != "/master/api/v1" {
		http.NotFound(w, r)
		return
	}
	var call master.Call
	media, ok := m.readCall(w, r, &call, master.Call_Type_value, masterPrefix)
	if !ok {
		return
	}
	bad := func(field string) {
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: Expecting '%s' to be present", masterPrefix, field))
	}
	respond := func(resp *master.Response) {
		out, _, herr := responseMedia(r, media)
		if herr != nil {
			writeError(w, herr)
			return
		}
		b, err := encodeMessage(out, resp)
		if err != nil {
			writeError(w, errorf(http.StatusInternalServerError, "Failed to encode response: %v", err))
			return
		}
		if out == mediaJSON {
			b = patchOperatorJSON(resp.Type, b)
		}
		w.Header().Set("Content-Type", out)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	}
	switch call.Type {
	case master.Call_UNKNOWN:
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: Expecting 'type' to be present", masterPrefix))
	case master.Call_GET_HEALTH:
		respond(&master.Response{Type: respType(call.Type), GetHealth: &master.Response_GetHealth{Healthy: true}})
	case master.Call_GET_VERSION:
		bd := startTime.UTC().Format("2006-01-02 15:04:05")
		bt := float64(startTime.Unix())
		user := ""
		respond(&master.Response{Type: respType(call.Type), GetVersion: &master.Response_GetVersion{VersionInfo: mesos.VersionInfo{
			Version: Version, BuildDate: &bd, BuildTime: &bt, BuildUser: &user}}})
	case master.Call_GET_MASTER:
		m.mu.Lock()
		mi := m.masterInfoLocked()
		m.mu.Unlock()
		st := float64(startTime.UnixNano()) / 1e9
		respond(&master.Response{Type: respType(call.Type), GetMaster: &master.Response_GetMaster{MasterInfo: mi, StartTime: &st, ElectedTime: &st}})
	case master.Call_GET_AGENTS:
		m.mu.Lock()
		ga := m.getAgentsLocked()
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetAgents: ga})
	case master.Call_GET_FRAMEWORKS:
		m.mu.Lock()
		gf := m.getFrameworksLocked()
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetFrameworks: gf})
	case master.Call_GET_TASKS:
		out, _, _ := responseMedia(r, media) // (respond answers a bad Accept)
		m.mu.Lock()
		gt := m.getTasksLocked(out != mediaProtobuf)
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetTasks: gt})
	case master.Call_GET_EXECUTORS:
		respond(&master.Response{Type: respType(call.Type), GetExecutors: &master.Response_GetExecutors{}})
	case master.Call_GET_STATE:
		out, _, _ := responseMedia(r, media)
		m.mu.Lock()
		gs := m.getStateLocked(out != mediaProtobuf)
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetState: gs})
	case master.Call_GET_ROLES:
		m.mu.Lock()
		gr := m.getRolesLocked()
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetRoles: gr})
	case master.Call_GET_QUOTA:
		m.mu.Lock()
		gq := m.getQuotaLocked()
		m.mu.Unlock()
		respond(&master.Response{Type: respType(call.Type), GetQuota: gq})
	case master.Call_UPDATE_QUOTA:
		if call.UpdateQuota == nil {
			bad("update_quota")
			return
		}
		if herr := m.UpdateQuota(call.UpdateQuota.GetForce(), call.UpdateQuota.QuotaConfigs); herr != nil {
			writeError(w, asHTTPError(herr))
			return
		}
		writeEmpty(w, http.StatusOK)
	case master.Call_RESERVE_RESOURCES:
		if call.ReserveResources == nil {
			bad("reserve_resources")
			return
		}
		if err := m.operatorReserve(call.ReserveResources.AgentID.Value, call.ReserveResources.Resources, true); err != nil {
			writeError(w, asHTTPError(err))
			return
		}
		writeEmpty(w, http.StatusAccepted)
	case master.Call_UNRESERVE_RESOURCES:
		if call.UnreserveResources == nil {
			bad("unreserve_resources")
			return
		}
		if err := m.operatorReserve(call.UnreserveResources.AgentID.Value, call.UnreserveResources.Resources, false); err != nil {
			writeError(w, asHTTPError(err))
			return
		}
		writeEmpty(w, http.StatusAccepted)
	case master.Call_TEARDOWN:
		if call.Teardown == nil {
			bad("teardown")
			return
		}
		m.mu.Lock()
		fw := m.frameworks[call.Teardown.FrameworkID.Value]
		if fw == nil {
			m.mu.Unlock()
			writeError(w, errorf(http.StatusBadRequest, "No framework found with specified ID"))
			return
		}
		m.removeFrameworkLocked(fw, "operator teardown")
		m.mu.Unlock()
		writeEmpty(w, http.StatusOK)
	case master.Call_DEACTIVATE_AGENT, master.Call_DRAIN_AGENT, master.Call_REACTIVATE_AGENT:
		var id *mesos.AgentID
		switch {
		case call.Type == master.Call_DEACTIVATE_AGENT && call.DeactivateAgent != nil:
			id = &call.DeactivateAgent.AgentID
		case call.Type == master.Call_DRAIN_AGENT && call.DrainAgent != nil:
			id = &call.DrainAgent.AgentID
		case call.Type == master.Call_REACTIVATE_AGENT && call.ReactivateAgent != nil:
			id = &call.ReactivateAgent.AgentID
		}
		if id == nil {
			bad(strings.ToLower(call.Type.String()))
			return
		}
		m.mu.Lock()
		var herr *httpError
		if call.Type == master.Call_REACTIVATE_AGENT {
			herr = m.reactivateLocked(id.Value)
		} else {
			herr = m.deactivateLocked(id.Value, call.Type == master.Call_DRAIN_AGENT)
		}
		m.mu.Unlock()
		if herr != nil {
			writeError(w, herr)
			return
		}
		writeEmpty(w, http.StatusOK)
	case master.Call_SUBSCRIBE:
		m.operatorSubscribe(w, r, media)
	default:
		writeError(w, errorf(http.StatusNotImplemented, "Call type %s is not supported by the emulator", call.Type))
	}
}

// Fields of Mesos 1.12 that mesos-go v0.0.11's types lack, added to JSON
// answers as the real master sends them (protobuf answers lack them: a
// mesos-go client would drop them anyway): AgentInfo.checkpoint (agents
// checkpoint by default) and the frameworks' offer_constraints (empty when
// none were set).
var (
	agentInfoJSON     = []byte(`"agent_info":{`)
	agentInfoJSONTo   = []byte(`"agent_info":{"checkpoint":true,`)
	frameworkInfoJSON = []byte(`"framework_info":{`)
	frameworkJSONTo   = []byte(`"offer_constraints":{},"framework_info":{`)
)

func patchOperatorJSON(t master.Response_Type, b []byte) []byte {
	switch t {
	case master.Response_GET_MASTER:
		b = bytes.Replace(b, quotaV2JSONFrom, quotaV2JSONTo, 1)
	case master.Response_GET_AGENTS:
		b = bytes.ReplaceAll(b, agentInfoJSON, agentInfoJSONTo)
	case master.Response_GET_FRAMEWORKS:
		b = bytes.ReplaceAll(b, frameworkInfoJSON, frameworkJSONTo)
	case master.Response_GET_STATE:
		b = bytes.ReplaceAll(b, agentInfoJSON, agentInfoJSONTo)
		b = bytes.ReplaceAll(b, frameworkInfoJSON, frameworkJSONTo)
	}
	return b
}

func asHTTPError(err error) *httpError {
	if h, ok := err.(*httpError); ok {
		return h
	}
	return errorf(http.StatusBadRequest, "%s", err.Error())
}

// ---- reservations ----

func overlaps(a, b Res) bool {
	for _, e := range b {
		i := a.find(e.k)
		if i < 0 {
			continue
		}
		if e.ranges {
			if len(spansSub(e.rng, a[i].rng)) != len(e.rng) || spansCount(spansSub(e.rng, a[i].rng)) != spansCount(e.rng) {
				return true
			}
		} else if e.v > 0 && a[i].v > 0 {
			return true
		}
	}
	return false
}

// operatorReserve implements RESERVE_RESOURCES (reserve=true) and
// UNRESERVE_RESOURCES. Offers on the agent that hold needed resources are
// rescinded first; 409 if the unallocated resources still fall short.
func (m *Master) operatorReserve(agentID string, in []mesos.Resource, reserve bool) error {
	kind := "RESERVE"
	if !reserve {
		kind = "UNRESERVE"
	}
	p, err := parseResources(in)
	if err != nil {
		return errorf(http.StatusBadRequest, "Invalid %s operation: %v", kind, err)
	}
	if p.res.isEmpty() {
		return errorf(http.StatusBadRequest, "Invalid %s operation: no resources specified", kind)
	}
	for _, e := range p.res {
		if !e.k.reserved() || p.static {
			return errorf(http.StatusBadRequest, "Invalid %s operation: Resource %s is not dynamically reserved", kind, Res{e})
		}
		if msg := validateRole(e.k.role); msg != "" {
			return errorf(http.StatusBadRequest, "Invalid %s operation: %s", kind, msg)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ag := m.agents[agentID]
	now := time.Now()
	m.markUnreachableLocked(now)
	// A real master accepts (202) and applies reservations on an agent that
	// is disconnected but not yet unreachable (still listed).
	if ag == nil || !m.listedLocked(ag, now) {
		return errorf(http.StatusBadRequest, "No agent found with specified ID")
	}
	if ag.disconnected() && !ag.checkpointSet {
		ag.checkpoint, ag.checkpointSet = ag.total, true
	}
	required := p.res
	if reserve {
		required = p.res.stripReservations()
	}
	avail := ag.available()
	if !avail.contains(required) {
		for _, id := range sortedOfferIDs(ag.offers) {
			o := ag.offers[id]
			if !overlaps(o.res, required) {
				continue
			}
			m.removeOfferLocked(o, true)
			avail = ag.available()
			if avail.contains(required) {
				break
			}
		}
	}
	if !avail.contains(required) {
		return errorf(http.StatusConflict, "%s does not contain %s", avail, required)
	}
	if reserve {
		ag.total = ag.total.minus(required).plus(p.res)
	} else {
		ag.total = ag.total.minus(p.res).plus(p.res.stripReservations())
	}
	m.activeCheckLocked(ag)
	m.log.WithFields(logrus.Fields{"agent": agentID, "resources": p.res.String()}).Infof("operator %s", kind)
	m.kickAgentLocked(ag)
	return nil
}

func sortedOfferIDs(os map[string]*offer) []string {
	ids := make([]string, 0, len(os))
	for id := range os {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ---- quota ----

func fmtQuotaMap(q map[string]int64, style int) string {
	names := make([]string, 0, len(q))
	for n := range q {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		switch style {
		case 0:
			parts = append(parts, n+":"+fmtScalar(q[n]))
		case 1:
			parts = append(parts, n+": "+fmtScalar(q[n]))
		}
	}
	if style == 1 {
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return strings.Join(parts, "; ")
}

// UpdateQuota applies UPDATE_QUOTA configs (quota v2: guarantees and limits
// per top-level role). Errors are *httpError with the master's texts.
func (m *Master) UpdateQuota(force bool, configs []quota.QuotaConfig) error {
	type parsed struct {
		role     string
		guar, li map[string]int64
	}
	var ps []parsed
	conv := func(kind string, in map[string]mesos.Value_Scalar) (map[string]int64, *httpError) {
		out := map[string]int64{}
		for n, v := range in {
			if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
				return nil, errorf(http.StatusBadRequest, "Invalid QuotaConfig: Invalid %s configuration {'%s': %v}: Invalid value", kind, n, v.Value)
			}
			if v.Value < 0 {
				return nil, errorf(http.StatusBadRequest, "Invalid QuotaConfig: Invalid %s configuration {'%s': %s}: Negative values not supported", kind, n, fmtScalar(toMilli(v.Value)))
			}
			out[n] = toMilli(v.Value)
		}
		return out, nil
	}
	for _, c := range configs {
		if strings.Contains(strings.Trim(c.Role, "/"), "/") {
			return errorf(http.StatusBadRequest, "Updating quota on nested role '%s' is not supported yet", c.Role)
		}
		if msg := validateRole(c.Role); msg != "" {
			return errorf(http.StatusBadRequest, "Invalid QuotaConfig: %s", msg)
		}
		g, herr := conv("guarantee", c.Guarantees)
		if herr != nil {
			return herr
		}
		l, herr := conv("limit", c.Limits)
		if herr != nil {
			return herr
		}
		for n, gv := range g {
			if lv, ok := l[n]; ok && gv > lv {
				return errorf(http.StatusBadRequest, "Invalid QuotaConfig: 'QuotaConfig.guarantees' %s is not contained within the 'QuotaConfig.limits' %s",
					fmtQuotaMap(g, 1), fmtQuotaMap(l, 1))
			}
		}
		ps = append(ps, parsed{c.Role, g, l})
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !force {
		total := map[string]int64{}
		capacity := map[string]int64{}
		for _, a := range m.agents {
			if a.poweredOff {
				continue
			}
			for _, e := range a.total {
				if !e.ranges {
					capacity[e.k.name] += e.v
				}
			}
		}
		pending := map[string]bool{}
		for _, p := range ps {
			pending[p.role] = true
			for n, v := range p.guar {
				total[n] += v
			}
		}
		for role, q := range m.quotas {
			if !pending[role] {
				for n, v := range q.guarantees {
					total[n] += v
				}
			}
		}
		for n, v := range total {
			if v > capacity[n] {
				return errorf(http.StatusBadRequest, "Invalid QuotaConfig: total quota guarantees '%s' exceed cluster capacity '%s' (use 'force' flag to bypass this check)",
					fmtQuotaMap(total, 0), fmtQuotaMap(capacity, 0))
			}
		}
		for _, p := range ps {
			cons := m.roleConsumptionLocked(p.role)
			over := false
			for n, lv := range p.li {
				if cons.scalar(n) > lv {
					over = true
				}
			}
			if over {
				cm := map[string]int64{}
				for _, e := range cons {
					if !e.ranges && e.v > 0 {
						cm[e.k.name] += e.v
					}
				}
				return errorf(http.StatusBadRequest, "Invalid QuotaConfig: Role '%s' is already consuming '%s'; this is more than the requested limits '%s' (use 'force' flag to bypass this check)",
					p.role, fmtQuotaMap(cm, 0), fmtQuotaMap(p.li, 0))
			}
		}
	}
	for _, p := range ps {
		if _, ok := m.quotas[p.role]; !ok {
			m.quotaOrder = append(m.quotaOrder, p.role)
		}
		m.quotas[p.role] = &quotaConfig{role: p.role, guarantees: p.guar, limits: p.li}
		m.log.WithFields(logrus.Fields{"role": p.role, "limits": fmtQuotaMap(p.li, 0), "guarantees": fmtQuotaMap(p.guar, 0)}).Info("quota updated")
	}
	m.kickAllocator()
	return nil
}

func quotaScalars(q map[string]int64) map[string]mesos.Value_Scalar {
	if len(q) == 0 {
		return nil
	}
	out := make(map[string]mesos.Value_Scalar, len(q))
	for n, v := range q {
		out[n] = mesos.Value_Scalar{Value: fromMilli(v)}
	}
	return out
}

func (m *Master) getQuotaLocked() *master.Response_GetQuota {
	roles := append([]string(nil), m.quotaOrder...)
	sort.Strings(roles)
	st := quota.QuotaStatus{}
	for _, r := range roles {
		q := m.quotas[r]
		role := r
		info := quota.QuotaInfo{Role: &role}
		for _, n := range sortedKeys(q.guarantees) {
			info.Guarantee = append(info.Guarantee, mesos.Resource{Name: n, Type: mesos.SCALAR.Enum(),
				Scalar: &mesos.Value_Scalar{Value: fromMilli(q.guarantees[n])}})
		}
		st.Infos = append(st.Infos, info)
		st.Configs = append(st.Configs, quota.QuotaConfig{Role: r, Guarantees: quotaScalars(q.guarantees), Limits: quotaScalars(q.limits)})
	}
	return &master.Response_GetQuota{Status: st}
}

func sortedKeys(q map[string]int64) []string {
	out := make([]string, 0, len(q))
	for k := range q {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- read-only state ----

func respType(t master.Call_Type) master.Response_Type {
	return master.Response_Type(master.Response_Type_value[t.String()])
}
