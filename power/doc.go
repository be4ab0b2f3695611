// Package power turns idle Mesos agents off and on again, so that the
// cluster's bill follows what sparkpack packs onto it.
//
// A Manager keeps one persisted record per agent and moves it through
// on -> draining -> powering-off -> off -> booting -> on. It is driven from
// outside: Tick is given what Mesos shows of every agent (registered or
// not, busy or idle, drained or not), and PowerOn is called when a plan
// needs an agent that is off. Every step is written to the Store before
// the step's action (DRAIN_AGENT, the provider's power-off, ...) is taken,
// and every action is idempotent, so a crash at any point is finished by
// the next Tick: an agent is never left drained while it is on, and an
// agent that holds any task or reservation (sparkpack's or anyone's) is
// never powered off.
//
// A Tick on a stale view (TickView: the last GET_AGENTS failed, none
// answered yet, or it is too old) decides no power-off and lets no clock
// run (idle, drain, boot); only power-ons proceed (stale.go).
//
// A machine that comes back under a new Mesos agent id (its work dir did
// not survive the power cycle) is recognised by its hostname: its record
// moves to the new id and the old id is forgotten, once nothing can refer
// to it (newid.go).
//
// Providers do the powering: an operator's program run with an argument
// vector (exec), an HTTP webhook, or the Mesos emulator's power API.
//
// This package must not import Mesos, SQL or HTTP-server packages: the
// Mesos calls and the store are interfaces (package offers and package
// store implement them); providers may use net/http and os/exec as clients.
package power
