// Package intake makes sure that every job stored in the database reaches
// the leader's scheduler core, whichever instance stored it and whatever
// notifications were lost on the way. It is the safety net around the
// core's intake:
//
//   - the direct hand-off (Route): on the leader, a job the API stored is
//     handed to the core in-process; a follower's group commit announces
//     it (NOTIFY); an instance whose leadership ended, or is in doubt,
//     while the job was being stored announces it itself;
//   - the notifications (Intake.Submitted, Intake.Cancelled): the jobs the
//     database announces are read and the waiting ones handed over;
//   - the resync (Intake.Resync): when notifications may have been missed
//     (the listener reconnected, a new term began), every waiting job and
//     every pending kill is handed over again (the core ignores what it
//     knows);
//   - the lost-job rescan (Intake.RescanLost): every period, the waiting
//     jobs stored lately that the core has not heard of at two rescans in a
//     row are read and handed over.
//
// It must not import Mesos, HTTP, package store or the API: it sees the
// store and the core through the Store and Core interfaces (package store
// and *scheduler.Core implement them); cmd/sparkpack wires it.
package intake
