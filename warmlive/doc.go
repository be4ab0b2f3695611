// Package warmlive runs the warm pool live (issue 31): on the leader, at
// the start of its term and every interval after, it loads the submission
// history from the store (a bounded query), fits package forecast's
// Model, asks package warmpool's Decide which agents to keep warm given
// the agents, the queue, the running jobs' expected ends and the boot
// time, and applies the Plan through power management: the agents it
// keeps are "wanted" (power management's callback keeps them on past
// their idle timeout) and the agents to power on ahead of the forecast
// demand are powered on. It also answers GET /api/v1/forecast (View).
//
// Decide, then apply: Jobs (store rows to forecast input), Inputs (what
// Decide sees), ActionsOf (a plan to power actions) and View are pure;
// Runner does the I/O, in one goroutine its caller owns (Run ends with
// its context). An empty or corrupt history gives no forecast: the plan
// keeps nothing beyond the floor (today's behaviour), the reason is
// logged once, and nothing is powered on or off because of it.
//
// It must not import net/http, mesos-go, package offers or the scheduler
// core: the live product hands it functions (Sources).
package warmlive
