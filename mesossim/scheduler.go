package mesossim

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

const schedPrefix = "scheduler::Call"

func (m *Master) unavailable() *httpError {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Now().Before(m.unavailUntil) {
		return errorf(http.StatusServiceUnavailable, "No leader elected")
	}
	return nil
}

func (m *Master) handleScheduler(w http.ResponseWriter, r *http.Request) {
	var call scheduler.Call
	media, ok := m.readCall(w, r, &call, scheduler.Call_Type_value, schedPrefix)
	if !ok {
		return
	}
	if call.Type == scheduler.Call_UNKNOWN {
		// The real 1.12.0 master aborts here (CHECK failure); answer 400.
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: Expecting 'type' to be present", schedPrefix))
		return
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		m.subscribe(w, r, media, &call)
		return
	}
	if herr := validateSchedulerCall(&call); herr != nil {
		writeError(w, herr)
		return
	}
	code, herr := m.schedulerCall(&call, r.Header.Get("Mesos-Stream-Id"))
	if herr != nil {
		writeError(w, herr)
		return
	}
	writeEmpty(w, code)
}

// validateSchedulerCall checks the presence of the fields a call needs, in
// the order and with the texts of Mesos' validation.
func validateSchedulerCall(c *scheduler.Call) *httpError {
	bad := func(format string, args ...any) *httpError {
		return errorf(http.StatusBadRequest, "Failed to validate %s: %s", schedPrefix, fmt.Sprintf(format, args...))
	}
	if c.FrameworkID == nil {
		return bad("Expecting 'framework_id' to be present")
	}
	need := func(ok bool, field string) *httpError {
		if !ok {
			return bad("Expecting '%s' to be present", field)
		}
		return nil
	}
	switch c.Type {
	case scheduler.Call_ACCEPT:
		return need(c.Accept != nil, "accept")
	case scheduler.Call_DECLINE:
		return need(c.Decline != nil, "decline")
	case scheduler.Call_KILL:
		return need(c.Kill != nil, "kill")
	case scheduler.Call_SHUTDOWN:
		return need(c.Shutdown != nil, "shutdown")
	case scheduler.Call_ACKNOWLEDGE:
		if e := need(c.Acknowledge != nil, "acknowledge"); e != nil {
			return e
		}
		if len(c.Acknowledge.UUID) != 16 {
			return bad("Not a valid UUID")
		}
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		if e := need(c.AcknowledgeOperationStatus != nil, "acknowledge_operation_status"); e != nil {
			return e
		}
		if len(c.AcknowledgeOperationStatus.UUID) != 16 {
			return bad("Not a valid UUID")
		}
	case scheduler.Call_RECONCILE:
		return need(c.Reconcile != nil, "reconcile")
	case scheduler.Call_RECONCILE_OPERATIONS:
		return need(c.ReconcileOperations != nil, "reconcile_operations")
	case scheduler.Call_MESSAGE:
		return need(c.Message != nil, "message")
	case scheduler.Call_REQUEST:
		return need(c.Request != nil, "request")
	case scheduler.Call_UPDATE_FRAMEWORK:
		if e := need(c.UpdateFramework != nil, "update_framework"); e != nil {
			return e
		}
		if c.UpdateFramework.FrameworkInfo.ID == nil || c.UpdateFramework.FrameworkInfo.ID.Value != c.FrameworkID.Value {
			return bad("'framework_id' differs from 'update_framework.framework_info.id'")
		}
	case scheduler.Call_ACCEPT_INVERSE_OFFERS:
		return need(c.AcceptInverseOffers != nil, "accept_inverse_offers")
	case scheduler.Call_DECLINE_INVERSE_OFFERS:
		return need(c.DeclineInverseOffers != nil, "decline_inverse_offers")
	}
	return nil
}

// schedulerCall runs a non-SUBSCRIBE call and returns the success code.
func (m *Master) schedulerCall(c *scheduler.Call, streamID string) (int, *httpError) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[c.FrameworkID.Value]
	if fw == nil || fw.removed {
		return 0, errorf(http.StatusBadRequest, "Framework cannot be found")
	}
	if fw.spark != nil {
		return 0, errorf(http.StatusForbidden, "Framework is not connected via HTTP")
	}
	if !fw.connected || fw.stream == nil {
		return 0, errorf(http.StatusForbidden, "Framework is not subscribed")
	}
	if streamID == "" {
		return 0, errorf(http.StatusBadRequest, "All non-subscribe calls should include the 'Mesos-Stream-Id' header")
	}
	if streamID != fw.stream.id {
		return 0, errorf(http.StatusBadRequest, "The stream ID '%s' included in this request didn't match the stream ID currently associated with framework ID %s", streamID, fw.id)
	}
	return m.dispatchLocked(fw, c)
}

// dispatchLocked runs a validated call for fw (HTTP or simulated Spark).
func (m *Master) dispatchLocked(fw *framework, c *scheduler.Call) (int, *httpError) {
	switch c.Type {
	case scheduler.Call_TEARDOWN:
		m.removeFrameworkLocked(fw, "teardown")
	case scheduler.Call_ACCEPT:
		m.acceptLocked(fw, c.Accept)
	case scheduler.Call_DECLINE:
		m.declineLocked(fw, c.Decline.OfferIDs, c.Decline.Filters)
	case scheduler.Call_REVIVE:
		var roles []string
		if c.Revive != nil {
			roles = c.Revive.Roles
		}
		m.reviveLocked(fw, roles)
	case scheduler.Call_SUPPRESS:
		var roles []string
		if c.Suppress != nil {
			roles = c.Suppress.Roles
		}
		m.suppressLocked(fw, roles)
	case scheduler.Call_KILL:
		m.killLocked(fw, c.Kill)
	case scheduler.Call_ACKNOWLEDGE:
		m.acknowledgeLocked(fw, c.Acknowledge.TaskID.Value, c.Acknowledge.UUID)
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		m.ackOperationLocked(fw, c.AcknowledgeOperationStatus)
	case scheduler.Call_RECONCILE:
		m.reconcileLocked(fw, c.Reconcile.Tasks)
	case scheduler.Call_RECONCILE_OPERATIONS:
		m.reconcileOperationsLocked(fw, c.ReconcileOperations)
	case scheduler.Call_UPDATE_FRAMEWORK:
		if msg := validateFrameworkInfo(&c.UpdateFramework.FrameworkInfo); msg != "" {
			return 0, errorf(http.StatusBadRequest, "%s", msg)
		}
		m.updateFrameworkLocked(fw, c.UpdateFramework.FrameworkInfo)
		return http.StatusOK, nil
	case scheduler.Call_SHUTDOWN, scheduler.Call_MESSAGE, scheduler.Call_REQUEST,
		scheduler.Call_ACCEPT_INVERSE_OFFERS, scheduler.Call_DECLINE_INVERSE_OFFERS:
		// accepted and ignored: the simulated agents have no custom
		// executors and there are no inverse offers
	default:
		return 0, errorf(http.StatusNotImplemented, "Call type %s is not supported by the emulator", c.Type)
	}
	return http.StatusAccepted, nil
}

// validateFrameworkInfo returns the message of the ERROR event the master
// sends for an invalid FrameworkInfo, or "".
func validateFrameworkInfo(fi *mesos.FrameworkInfo) string {
	multi := false
	for _, c := range fi.Capabilities {
		if c.Type == mesos.FrameworkInfo_Capability_MULTI_ROLE {
			multi = true
		}
	}
	if !multi && len(fi.Roles) > 0 {
		return "'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable"
	}
	if multi && fi.Role != nil {
		return "'FrameworkInfo.role' must not be set when the framework is MULTI_ROLE capable"
	}
	roles := fi.Roles
	if !multi {
		roles = []string{fi.GetRole()}
	}
	seen := map[string]bool{}
	for _, r := range roles {
		if msg := validateRole(r); msg != "" {
			return msg
		}
		if seen[r] {
			return "'FrameworkInfo.roles' contains duplicate items"
		}
		seen[r] = true
	}
	// As Mesos' validateFailoverTimeout: a timeout a Duration cannot hold
	// is refused (here 1e300 s became a negative Duration, and the
	// framework was removed the moment it disconnected).
	if ft := fi.GetFailoverTimeout(); math.IsNaN(ft) || math.Abs(ft*float64(time.Second)) >= math.MaxInt64 {
		return fmt.Sprintf("The framework failover_timeout (%g) is invalid", ft)
	}
	return ""
}

func validateRole(r string) string {
	switch {
	case r == "":
		return "Role names cannot be empty"
	case r == "*":
		return ""
	case r == "." || r == "..":
		return fmt.Sprintf("Role '%s' cannot be '.' or '..'", r)
	case strings.HasPrefix(r, "-"):
		return fmt.Sprintf("Role '%s' cannot start with '-'", r)
	case strings.HasPrefix(r, "/") || strings.HasSuffix(r, "/"):
		return fmt.Sprintf("Role '%s' cannot start or end with a slash", r)
	case strings.ContainsAny(r, " \t\n\r\v\f\\*"):
		return fmt.Sprintf("Role '%s' cannot contain whitespace, '\\' or '*'", r)
	}
	return ""
}

// subscribe serves SUBSCRIBE: a streaming RecordIO response.
func (m *Master) subscribe(w http.ResponseWriter, r *http.Request, reqMedia string, c *scheduler.Call) {
	media, recordio, herr := responseMedia(r, reqMedia)
	if herr != nil {
		writeError(w, herr)
		return
	}
	if c.Subscribe == nil {
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: Expecting 'subscribe' to be present", schedPrefix))
		return
	}
	if c.Subscribe.FrameworkInfo == nil {
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: Expecting 'subscribe.framework_info' to be present", schedPrefix))
		return
	}
	fi := *c.Subscribe.FrameworkInfo
	if c.FrameworkID != nil && (fi.ID == nil || fi.ID.Value != c.FrameworkID.Value) {
		writeError(w, errorf(http.StatusBadRequest, "Failed to validate %s: 'framework_id' differs from 'subscribe.framework_info.id'", schedPrefix))
		return
	}
	flusher, _ := w.(http.Flusher)
	s := newStream(media, recordio)
	if recordio {
		w.Header().Set("Content-Type", mediaRecordIO)
		w.Header().Set("Message-Content-Type", media)
	} else {
		w.Header().Set("Content-Type", media)
	}
	w.Header().Set("Mesos-Stream-Id", s.id)
	w.WriteHeader(http.StatusOK)

	writeOne := func(ev *scheduler.Event) error {
		b, err := encodeEvent(media, ev)
		if err != nil {
			return err
		}
		if _, err := w.Write(recordIO(b)); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	if msg := validateFrameworkInfo(&fi); msg != "" {
		_ = writeOne(errorEvent(msg))
		return
	}

	m.mu.Lock()
	if m.ctx.Err() != nil {
		m.mu.Unlock()
		return
	}
	fw, errMsg := m.registerLocked(fi, s)
	m.mu.Unlock()
	if errMsg != "" {
		_ = writeOne(errorEvent(errMsg))
		return
	}
	m.log.WithFields(logrus.Fields{"framework": fw.id, "stream": s.id, "roles": fw.roles}).Info("framework subscribed")

	hb := time.NewTicker(m.cfg.HeartbeatInterval)
	defer hb.Stop()
	ctxDone := r.Context().Done()
	for {
		for _, ev := range s.take() {
			if err := writeOne(ev); err != nil {
				m.streamEnded(s)
				return
			}
		}
		if s.closed() {
			// flush what was queued before the close (e.g. the failover ERROR)
			for _, ev := range s.take() {
				_ = writeOne(ev)
			}
			m.streamEnded(s)
			return
		}
		select {
		case <-s.notify:
		case <-s.done:
		case <-hb.C:
			if err := writeOne(&scheduler.Event{Type: scheduler.Event_HEARTBEAT}); err != nil {
				m.streamEnded(s)
				return
			}
		case <-ctxDone:
			m.streamEnded(s)
			return
		case <-m.ctx.Done():
			m.streamEnded(s)
			return
		}
	}
}

func errorEvent(msg string) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: msg}}
}

// encodeEvent encodes an event; in JSON the master's QUOTA_V2 capability is
// spelled out as the real master does.
func encodeEvent(media string, ev *scheduler.Event) ([]byte, error) {
	b, err := encodeMessage(media, ev)
	if err != nil {
		return nil, err
	}
	if media == mediaJSON && ev.Type == scheduler.Event_SUBSCRIBED {
		b = bytes.Replace(b, quotaV2JSONFrom, quotaV2JSONTo, 1)
	}
	return b, nil
}

// registerLocked registers or fails over a framework for a new stream.
func (m *Master) registerLocked(fi mesos.FrameworkInfo, s *stream) (*framework, string) {
	now := time.Now()
	var fw *framework
	if fi.ID != nil && fi.ID.Value != "" {
		if m.removedIDs[fi.ID.Value] {
			return nil, "Framework has been removed"
		}
		fw = m.frameworks[fi.ID.Value]
		if fw != nil && fw.spark != nil {
			return nil, "Framework is not connected via HTTP"
		}
	}
	if fw == nil {
		id := ""
		if fi.ID != nil && fi.ID.Value != "" {
			id = fi.ID.Value // re-registration after a master failover
		} else {
			id = m.newFrameworkID()
		}
		fw = &framework{id: id, tasks: map[string]*task{}, offers: map[string]*offer{},
			suppressed: map[string]bool{}, registered: now}
		m.frameworks[id] = fw
	} else {
		if old := fw.stream; old != nil {
			old.send(errorEvent("Framework failed over"))
			old.close()
		}
		for _, o := range fw.offers {
			m.removeOfferLocked(o, false)
		}
		fw.failover.cancel()
		fw.failover = nil
	}
	id := fw.id
	fi.ID = &mesos.FrameworkID{Value: id}
	fw.setInfo(fi)
	fw.stream = s
	s.fw = fw
	fw.connected = true
	fw.recovered = false
	fw.reregistered = now
	hb := m.cfg.HeartbeatInterval.Seconds()
	s.send(&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID:              &mesos.FrameworkID{Value: id},
		HeartbeatIntervalSeconds: &hb,
		MasterInfo:               m.masterInfoLocked(),
	}})
	s.send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
	m.resendPendingLocked(fw)
	m.kickAllocator()
	return fw, ""
}

// streamEnded is called when a SUBSCRIBE response ends for any reason.
func (m *Master) streamEnded(s *stream) {
	s.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := s.fw
	if fw == nil || fw.stream != s {
		return
	}
	m.disconnectLocked(fw)
}

// disconnectLocked marks fw disconnected: its offers are recovered and the
// failover timeout starts.
func (m *Master) disconnectLocked(fw *framework) {
	fw.stream = nil
	fw.connected = false
	for _, o := range fw.offers {
		m.removeOfferLocked(o, false)
	}
	m.log.WithField("framework", fw.id).Info("framework disconnected")
	if fw.recovered {
		return
	}
	timeout := time.Duration(fw.info.GetFailoverTimeout() * float64(time.Second))
	fw.failover.cancel()
	fw.failover = m.afterLocked(timeout, func() {
		if !fw.connected && !fw.removed {
			m.log.WithField("framework", fw.id).Info("framework failover timeout expired")
			m.removeFrameworkLocked(fw, "failover timeout")
		}
	})
	m.kickAllocator()
}

// removeFrameworkLocked tears a framework down: tasks killed, offers
// recovered, stream closed without a final event.
func (m *Master) removeFrameworkLocked(fw *framework, why string) {
	if fw.removed {
		return
	}
	fw.removed = true
	fw.connected = false
	fw.unregistered = time.Now()
	fw.failover.cancel()
	for _, o := range fw.offers {
		m.removeOfferLocked(o, false)
	}
	for _, t := range fw.tasks {
		m.removeTaskLocked(t)
	}
	for _, op := range fw.opUpdates {
		op.retry.cancel()
	}
	fw.opUpdates = nil
	if fw.stream != nil {
		fw.stream.close()
		fw.stream = nil
	}
	delete(m.frameworks, fw.id)
	m.removedIDs[fw.id] = true
	m.completed = append(m.completed, fw)
	if len(m.completed) > 50 {
		m.completed = m.completed[len(m.completed)-50:]
	}
	if fw.spark != nil {
		m.sparkFrameworkRemovedLocked(fw.spark)
	}
	m.publishFrameworkRemovedLocked(fw)
	m.log.WithFields(logrus.Fields{"framework": fw.id, "reason": why}).Info("framework removed")
	m.kickAllocator()
}

func (m *Master) updateFrameworkLocked(fw *framework, fi mesos.FrameworkInfo) {
	fw.setInfo(fi)
	for _, o := range fw.offers {
		if !fw.hasRole(o.role) {
			m.removeOfferLocked(o, true)
		}
	}
	for r := range fw.suppressed {
		if !fw.hasRole(r) {
			delete(fw.suppressed, r)
		}
	}
	m.kickAllocator()
}

func (m *Master) suppressLocked(fw *framework, roles []string) {
	if len(roles) == 0 {
		roles = fw.roles
	}
	for _, r := range roles {
		fw.suppressed[r] = true
	}
}

func (m *Master) reviveLocked(fw *framework, roles []string) {
	if len(roles) == 0 {
		roles = fw.roles
	}
	want := map[string]bool{}
	for _, r := range roles {
		want[r] = true
		delete(fw.suppressed, r)
	}
	fw.filters.dropRoles(want)
	m.kickAllocator()
}

func (m *Master) declineLocked(fw *framework, ids []mesos.OfferID, filters *mesos.Filters) {
	for _, id := range ids {
		o := m.offers[id.Value]
		if o == nil || o.fw != fw {
			continue
		}
		m.removeOfferLocked(o, false)
		m.addFilterLocked(fw, o.role, o.agent.id, o.res, filters)
		m.kickAgentLocked(o.agent)
	}
}

func (m *Master) addFilterLocked(fw *framework, role, agentID string, res Res, filters *mesos.Filters) {
	secs := m.cfg.DefaultRefuseSeconds
	if filters != nil && filters.RefuseSeconds != nil {
		secs = *filters.RefuseSeconds
		// As Mesos' allocator (recoverResources): more than 365 days is
		// 365 days, a negative value takes the default (here it made no
		// filter), and NaN makes a filter that has already expired (its
		// Duration::create casts NaN to the smallest int64 on x86): none.
		switch {
		case math.IsNaN(secs):
			return
		case secs < 0:
			secs = m.cfg.DefaultRefuseSeconds
		}
	}
	if secs <= 0 || res.isEmpty() {
		return
	}
	if secs > 365*24*3600 {
		secs = 365 * 24 * 3600
	}
	fw.addFilter(&filter{role: role, agentID: agentID, res: res.clone(),
		until: time.Now().Add(time.Duration(secs * float64(time.Second)))})
}

// removeOfferLocked removes an offer and returns its resources; with rescind
// the framework gets a RESCIND event.
func (m *Master) removeOfferLocked(o *offer, rescind bool) {
	if m.offers[o.id] != o {
		return
	}
	delete(m.offers, o.id)
	delete(o.fw.offers, o.id)
	delete(o.agent.offers, o.id)
	o.agent.offered = o.agent.offered.minus(o.res)
	if rescind {
		m.sendLocked(o.fw, &scheduler.Event{Type: scheduler.Event_RESCIND,
			Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: o.id}}})
	}
}
