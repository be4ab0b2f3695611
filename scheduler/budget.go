package scheduler

// Budgets: a team that spent its budget for the period has its waiting
// jobs held (when its budget's action is hold; a reject budget refuses
// new jobs at the API instead). The spend and the decision live in package
// chargeback; the core only asks, at each pass, which teams are held and
// why, and keeps their jobs waiting with that reason. A held team's
// deadline jobs do not hold other teams' regular jobs back.

// BudgetHolds says which teams' waiting jobs are held.
type BudgetHolds interface {
	// HeldTeams is, by team, why its waiting jobs are held (e.g. "team
	// analytics over its daily budget $50.00"); empty when none is. The
	// map must not be changed after it is returned.
	HeldTeams() map[string]string
}

// budgetInput gives the pass the held teams, and leaves their deadline
// jobs out of the count that keeps regular jobs waiting.
func (c *Core) budgetInput(in *passInput) {
	if c.cfg.Budgets == nil {
		return
	}
	held := c.cfg.Budgets.HeldTeams()
	if len(held) == 0 {
		return
	}
	in.budgetHeld = held
	for _, e := range c.dq.Entries() {
		if _, ok := held[e.Team]; ok {
			in.deadlineQueued--
			if !in.full && !e.fresh && e.wait.byChoice {
				in.deferredOut-- // out of the count once
			}
		}
	}
}

// budgetHold keeps e waiting when its team is held; it has then recorded
// e's wait with the reason and returns true.
func (p *passRun) budgetHold(e *Entry) bool {
	reason, ok := p.budgetReason(e)
	if !ok {
		return false
	}
	p.wait(&decision{entry: e, wait: waitState{kind: waitText, text: reason, atRisk: p.d.atRisk(e, p.now)}})
	return true
}

// budgetReason is why e's team is held for its budget (ok false when it
// is not): the pass's reason, which the preview gives too.
func (p *passRun) budgetReason(e *Entry) (string, bool) {
	reason, ok := p.in.budgetHeld[e.Team]
	return reason, ok
}
