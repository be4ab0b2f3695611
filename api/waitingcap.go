package api

import (
	"context"
	"fmt"
	"net/http"
)

// waitingCounter is what the waiting cap needs of the store (package store
// implements it).
type waitingCounter interface {
	CountWaitingBy(ctx context.Context, name string) (int, error)
}

// underWaitingCap checks --max-waiting-per-token for p (tokenWaitingRefusal).
// On refusal it has answered (429, counted as too_many_waiting).
func (s *Server) underWaitingCap(ctx context.Context, w http.ResponseWriter, r *http.Request, p Principal, id string) bool {
	msg, err := s.tokenWaitingRefusal(ctx, p, id)
	if err != nil {
		writeStoreError(w, r, "count waiting jobs", err)
		return false
	}
	if msg == "" {
		return true
	}
	s.guard.Count(r, p.Listener, RefusedTooManyWaiting)
	writeError(w, http.StatusTooManyRequests, "", msg)
	return false
}

// tokenWaitingRefusal is why a new job of p is refused at
// --max-waiting-per-token ("" when it is not): the count from the store,
// then waitingCapRefusal. A resubmission of a job that exists already (the
// id the client gave) is never refused: it creates nothing. A submission
// (underWaitingCap) and a preview (planJob) both ask it.
func (s *Server) tokenWaitingRefusal(ctx context.Context, p Principal, id string) (string, error) {
	if s.cfg.MaxWaitingPerToken <= 0 || p.Name == "" {
		return "", nil
	}
	wc, ok := s.cfg.Store.(waitingCounter)
	if !ok {
		return "", nil
	}
	n, err := wc.CountWaitingBy(ctx, p.Name)
	if err != nil {
		return "", err
	}
	msg := waitingCapRefusal(p, n, s.cfg.MaxWaitingPerToken)
	if msg == "" {
		return "", nil
	}
	if id != "" {
		if _, err := s.cfg.Store.GetJob(ctx, id); err == nil {
			return "", nil
		}
	}
	return msg, nil
}

// waitingCapRefusal decides --max-waiting-per-token: why a new job of p,
// which has waiting jobs SUBMITTED or QUEUED, is refused under the cap
// limit ("" when it is not: no cap, no name, or fewer than limit waiting).
func waitingCapRefusal(p Principal, waiting, limit int) string {
	if limit <= 0 || p.Name == "" || waiting < limit {
		return ""
	}
	who := fmt.Sprintf("token %q already has", p.Name)
	if p.Via == "allowlist" {
		who = "clients of --spark-rest-allow already have"
	}
	return fmt.Sprintf(
		"%s %d jobs waiting (SUBMITTED or QUEUED), the most the operator allows (--max-waiting-per-token %d); submit again when some have started, or cancel some",
		who, waiting, limit)
}
