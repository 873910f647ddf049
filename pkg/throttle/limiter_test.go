package throttle

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server simulates an API server that serves capacity requests at once in
// service time each; beyond, its latency grows with its queue.
type server struct {
	capacity int
	service  time.Duration
	inflight atomic.Int32
}

// serve answers one request, taking as long as its queue makes it, and returns its latency.
func (s *server) serve() time.Duration {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	d := time.Duration(float64(s.service) * max(1, float64(n)/float64(s.capacity)))
	time.Sleep(d)
	return d
}

// TestLimiterFollowsLatency sends from 40 goroutines through a limiter that
// starts at its most (so only its probes can find the unloaded latency) to
// a simulated server whose latency grows once 2 requests are in flight:
// the requests in flight never exceed the limit nor MaxInflight, and the
// limit settles where the latency stays within the tolerance (about 4 in
// flight), far below the 12 that 40 senders would fill.
func TestLimiterFollowsLatency(t *testing.T) {
	l := NewLimiter(Config{InitialLimit: 12, MaxInflight: 12, Tolerance: 2, Samples: 10, Memory: 30, ProbeEvery: 10})
	s := &server{capacity: 2, service: 5 * time.Millisecond}
	var inflight, peak atomic.Int32
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for range 40 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := l.Acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				d := s.serve()
				inflight.Add(-1)
				l.Done(d, false)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 12 {
		t.Errorf("%d requests in flight at once, want at most 12", p)
	}
	st := l.Status()
	if st.Limit > 6 {
		t.Errorf("limit settled at %d, want about 4: the in-flight count at which the latency is twice the unloaded", st.Limit)
	}
	if st.Baseline < 5*time.Millisecond || st.Baseline > 7*time.Millisecond {
		t.Errorf("baseline %s, want the 5 ms of an unloaded server", st.Baseline)
	}
	if st.Latency > 15*time.Millisecond {
		t.Errorf("the last window's median latency is %s, want within about twice the 5 ms unloaded", st.Latency)
	}
}

func TestLimiterNeverExceedsItsLimit(t *testing.T) {
	l := NewLimiter(Config{InitialLimit: 2, MaxInflight: 8, Tolerance: 2, Samples: 1000})
	for range 2 {
		if err := l.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Acquire(ctx); err == nil {
		t.Fatal("a third Acquire at limit 2 got a place")
	}
	l.Cancel()
	if err := l.Acquire(context.Background()); err != nil {
		t.Errorf("Acquire after a place came back: %v", err)
	}
}

func TestLimiterHalvesOnOverload(t *testing.T) {
	l := NewLimiter(Config{InitialLimit: 8, MaxInflight: 16, Tolerance: 2, Samples: 10})
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Done(time.Millisecond, true)
	if got := l.Status().Limit; got != 4 {
		t.Errorf("limit after a 429 = %v, want 4", got)
	}
}

func TestLimiterStartsWithinItsBounds(t *testing.T) {
	if got := NewLimiter(Config{InitialLimit: 20, MaxInflight: 3}).Status().Limit; got != 3 {
		t.Errorf("limit = %d, want MaxInflight 3", got)
	}
	if got := NewLimiter(Config{}).Status().Limit; got != 1 {
		t.Errorf("limit of a zero Config = %d, want 1", got)
	}
}
