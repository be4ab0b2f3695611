// Package warmpool sizes the warm pool: which powered-on agents to keep on
// past their idle timeout, and which powered-off agents to power on ahead
// of time, so that the expected bill plus the expected cost of missed
// deadlines over the next boot time is lowest (issue 31, item 2; Lee ch. 4:
// a core pool kept on, an accelerator pool leased when deadline jobs are
// anticipated, sized from history).
//
// Decide is a pure function of its Input (the agents, the forecast of
// package forecast, the queue, the running jobs' expected ends, the boot
// time, the price of a miss and the min-warm-cpus floor); applying its
// Plan (power management's wanted callback and PowerOn) is the caller's.
// Without a forecast it keeps nothing beyond the floor: it never powers
// everything on or off on its own.
//
// It must not import database/sql, net/http, mesos-go, or package power's
// manager (it is imported by whoever applies it), and does no I/O.
package warmpool
