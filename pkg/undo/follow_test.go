package undo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPollAfter(t *testing.T) {
	for _, c := range []struct {
		poll, age, want time.Duration
	}{
		{0, 0, 100 * time.Millisecond},
		{0, 10 * time.Second, 200 * time.Millisecond},
		{0, time.Hour, time.Second},
		{50 * time.Millisecond, time.Hour, 50 * time.Millisecond},
	} {
		if got := pollAfter(c.poll, c.age); got != c.want {
			t.Errorf("pollAfter(%s, %s) = %s, want %s", c.poll, c.age, got, c.want)
		}
	}
}

// TestFollowUntil says each new line once, says a stalled line after the
// stalled period, and ends with the sighting that says so.
func TestFollowUntil(t *testing.T) {
	var said []string
	reads := 0
	err := followUntil(context.Background(), time.Millisecond, 5*time.Millisecond, func(l string) { said = append(said, l) }, nil,
		func(context.Context) (sighting, error) {
			reads++
			switch {
			case reads == 1:
				return sighting{}, nil // nothing to say yet
			case reads < 20:
				return sighting{line: "New", stalled: func(since time.Duration) string { return "still New" }}, nil
			}
			return sighting{line: "Completed", ended: true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if said[0] != "New" || said[len(said)-1] != "Completed" || !strings.Contains(strings.Join(said, ","), "still New") {
		t.Errorf("said %q, want New, still New at least once, then Completed", said)
	}
}

// TestFollowUntilCancelled: a read cut short by the end of its context
// ends the follow as a wait would, with what to do.
func TestFollowUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := followUntil(ctx, time.Millisecond, 0, func(string) {}, func(err error) error { return fmt.Errorf("run the undo again to follow it: %w", err) },
		func(context.Context) (sighting, error) {
			cancel()
			return sighting{}, errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
		})
	if err == nil || !strings.Contains(err.Error(), "run the undo again to follow it") || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the follow's own message around context.Canceled", err)
	}
}
