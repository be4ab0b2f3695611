// Package chargeback enforces team budgets from the cost ledger: what each
// team spent in its budget's period (a UTC day or month), and the decision
// it leads to. budget.go holds the pure part (the budget types, the period,
// Check: spent against budget, with the reason people read); tracker.go
// the loop that reads the spend from the store every few seconds and keeps
// the verdicts the scheduler (held teams: scheduler.BudgetHolds) and the
// API (refused submissions) ask for.
//
// The budgets come from the teams configuration through the small Budgets
// interface (team -> budget); Static is a fixed table (serve's
// --team-budgets until the teams file carries them).
//
// It must not import the scheduler core's internals, HTTP or SQL packages:
// the store is reached through SpendSource.
package chargeback
