package undo

import (
	"cmp"
	"context"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// pollAfter is how long the undo waits before it reads again what it
// follows (a Restore, an Undo, the restored claims): poll when set, else
// decide.VeleroPoll of how long it has followed it.
func pollAfter(poll, age time.Duration) time.Duration {
	if poll > 0 {
		return poll
	}
	return decide.VeleroPoll(age)
}

// sighting is one read of what the undo follows.
type sighting struct {
	// line says where it is ("" while there is nothing to say yet).
	line string
	// stalled says that line has not changed for so long ("": nothing).
	stalled func(since time.Duration) string
	// ended: the follow is over.
	ended bool
}

// followUntil reads with read (every pollAfter(poll, ...)) until it has
// ended, handing say each new line and, when a line has not changed for
// stalled (a minute when zero), what the sighting's stalled says, once a
// stalled period. When ctx ends first, while it waits or reads, it
// returns cancelled(ctx.Err()).
func followUntil(ctx context.Context, poll, stalled time.Duration, say func(string), cancelled func(error) error, read func(context.Context) (sighting, error)) error {
	began := time.Now()
	stalled = cmp.Or(stalled, time.Minute)
	last, moved, said := "", began, began
	for {
		s, err := read(ctx)
		if err != nil && ctx.Err() != nil {
			return cancelled(ctx.Err()) // the read was cut short by the end of ctx: say so, and what to do
		}
		if err != nil {
			return err
		}
		if s.line != "" {
			now := time.Now()
			switch {
			case s.line != last:
				say(s.line)
				moved, said = now, now
			case now.Sub(said) >= stalled && s.stalled != nil:
				if m := s.stalled(now.Sub(moved)); m != "" {
					say(m)
				}
				said = now
			}
			last = s.line
			if s.ended {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return cancelled(ctx.Err())
		case <-time.After(pollAfter(poll, time.Since(began))):
		}
	}
}
