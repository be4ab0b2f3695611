package retry

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
)

// First and Max bound the wait between two attempts: First after the first
// failure, twice as long after each next one, never more than Max.
const (
	First = 100 * time.Millisecond
	Max   = 5 * time.Second
)

// UntilDone calls try until it returns nil, and returns nil; or until ctx
// ends, and returns ctx's error. It logs the first failure (saying what it
// does, e.g. "recovery") and, after failures, the success.
func UntilDone(ctx context.Context, log logrus.FieldLogger, what string, try func() error) error {
	wait := First
	for failures := 0; ; failures++ {
		err := try()
		if err == nil {
			if failures > 0 {
				log.WithField("failures", failures).Infof("%s succeeded after failing", what)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if failures == 0 {
			log.WithError(err).Warnf("%s failed; trying again until the database answers", what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, Max)
	}
}
