package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/sirupsen/logrus"
)

// JobsChannel is the PostgreSQL NOTIFY channel on which every instance
// announces the jobs it stores ("s:<id>", or "s:<id>,<id>,..." for the
// jobs of one group commit) and the cancellations it records
// ("c:<id>:<1 if a kill was requested, else 0>"), at commit. The leader
// listens (Listen), so submissions and cancellations made through any
// instance reach its scheduler.
const JobsChannel = "sparkpack_jobs"

// JobEvents receives what Listen hears.
type JobEvents struct {
	// Submitted gets the ids of stored jobs, in batches.
	Submitted func(ids []string)
	// Cancelled gets a cancelled job (kill: it held resources).
	Cancelled func(id string, kill bool)
	// Resync is called when notifications may have been missed (the
	// listening connection was (re)established): the caller rescans.
	Resync func()
}

// Listen listens on JobsChannel with its own connection until ctx ends,
// reconnecting when the connection drops. It returns ctx.Err().
func Listen(ctx context.Context, url string, ev JobEvents, log logrus.FieldLogger) error {
	events := make(chan pq.ListenerEventType, 4)
	l := pq.NewListener(url, 100*time.Millisecond, 5*time.Second, func(t pq.ListenerEventType, err error) {
		if err != nil {
			log.WithError(err).Warn("job notifications: connection problem; reconnecting")
		}
		select {
		case events <- t:
		default:
		}
	})
	defer l.Close()
	if err := l.Listen(JobsChannel); err != nil {
		return fmt.Errorf("listen on %s: %w", JobsChannel, err)
	}
	if ev.Resync != nil {
		ev.Resync() // anything stored before LISTEN took effect
	}
	var batch []string
	flush := func() {
		if len(batch) > 0 && ev.Submitted != nil {
			ev.Submitted(batch)
		}
		batch = nil
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case t := <-events:
			if t == pq.ListenerEventReconnected && ev.Resync != nil {
				flush()
				ev.Resync()
			}
		case n := <-l.Notify:
			if n == nil { // reconnected: notifications may be lost
				flush()
				if ev.Resync != nil {
					ev.Resync()
				}
				continue
			}
			kind, rest, _ := strings.Cut(n.Extra, ":")
			switch kind {
			case "s":
				for rest != "" {
					var id string
					id, rest, _ = strings.Cut(rest, ",")
					if id != "" {
						batch = append(batch, id)
					}
				}
				if len(batch) >= 1000 {
					flush()
				}
			case "c":
				id, kill, _ := strings.Cut(rest, ":")
				flush()
				if ev.Cancelled != nil {
					ev.Cancelled(id, kill == "1")
				}
			}
		case <-tick.C:
			flush()
		case <-ping.C:
			// A connection that died silently is found out here; the
			// reconnection then triggers a resync.
			if err := l.Ping(); err != nil {
				log.WithError(err).Warn("job notifications: the listening connection does not answer")
			}
		}
	}
}
