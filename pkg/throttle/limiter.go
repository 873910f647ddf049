package throttle

import (
	"context"
	"sync"
	"time"
)

// Limiter bounds the requests in flight by the API server's latency. Safe
// for concurrent use.
type Limiter struct {
	cfg Config

	mu       sync.Mutex
	state    control
	inflight int
	// window are the latencies since the last decision.
	window []time.Duration
	// latest is the last window's median, for the gauges.
	latest time.Duration
	// wake is closed when a place may have come free.
	wake chan struct{}
}

// NewLimiter returns a Limiter at cfg.InitialLimit.
func NewLimiter(cfg Config) *Limiter {
	cfg.MaxInflight = max(1, cfg.MaxInflight)
	limit := min(cfg.MaxInflight, max(1, cfg.InitialLimit))
	return &Limiter{cfg: cfg, state: control{limit: limit}, wake: make(chan struct{})}
}

// Status is what a Limiter does now, for its gauges.
type Status struct {
	// Limit is the requests it lets be in flight.
	Limit int
	// Latency is the median of the last window; Baseline the unloaded latency it compares it with.
	Latency, Baseline time.Duration
}

// Status reports the limit and the latencies it follows.
func (l *Limiter) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Status{Limit: l.state.limit, Latency: l.latest, Baseline: l.state.baseline()}
}

// Acquire waits for a place among the limit's. Done, or Cancel when the
// request is not sent, gives it back.
func (l *Limiter) Acquire(ctx context.Context) error {
	l.mu.Lock()
	for l.inflight >= l.state.limit {
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
	l.inflight++
	l.mu.Unlock()
	return nil
}

// Cancel gives back the place of a request that was not sent.
func (l *Limiter) Cancel() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	l.wakeAll()
}

// Done gives the place back with the request's latency; overload says the
// API server refused it for load (a 429, a 5xx) or could not be reached.
func (l *Limiter) Done(latency time.Duration, overload bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	alone := l.inflight == 1
	l.inflight--
	switch {
	case overload:
		l.state.limit = overloaded(l.state.limit)
		if l.state.probing {
			l.state.resume = overloaded(l.state.resume)
		}
		l.window = l.window[:0]
	case l.state.probing && !alone:
		// A probe measures requests that ran alone: those sent before it drain first.
	default:
		l.window = append(l.window, latency)
		if len(l.window) >= l.cfg.windowSize(l.state.limit) {
			l.latest = median(l.window)
			l.state = l.cfg.afterWindow(l.state, l.latest)
			l.window = l.window[:0]
		}
	}
	l.wakeAll()
}

// wakeAll lets whoever waits look again; l.mu is held.
func (l *Limiter) wakeAll() {
	close(l.wake)
	l.wake = make(chan struct{})
}
