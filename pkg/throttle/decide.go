package throttle

import (
	"slices"
	"time"
)

// Config is a Limiter's settings.
type Config struct {
	// InitialLimit is the requests it lets be in flight at first; the limit
	// stays between 1 and MaxInflight.
	InitialLimit, MaxInflight int
	// Tolerance is how many times the baseline latency a window's median may
	// reach and the limit still grow.
	Tolerance float64
	// Samples is the least number of latencies a window holds (it also
	// holds at least two per place in flight).
	Samples int
	// Memory is how many windows the baseline remembers: the lowest median
	// of the last Memory windows, so that a server slower for good becomes
	// the new baseline rather than a limit of 1 for ever.
	Memory int
	// ProbeEvery is how many windows pass between two probes: a window at
	// a limit of 1, whose requests each run alone, so that the baseline is
	// the latency of requests that queue behind none of csv-cleaner's own
	// (else a limiter that starts on a loaded server takes that load for
	// the baseline and the limit creeps up, TCP Vegas's inflation; BBR
	// measures again the same way). 0: never.
	ProbeEvery int
}

// DefaultConfig paces csv-cleaner's background writes: from 2 in flight,
// one more a window while the API server answers them within twice the
// lowest latency it answered them with recently, never more than maxInflight.
func DefaultConfig(maxInflight int) Config {
	return Config{InitialLimit: 2, MaxInflight: max(1, maxInflight), Tolerance: 2, Samples: 10, Memory: 30, ProbeEvery: 10}
}

// windowSize is how many latencies the window at limit holds.
func (c Config) windowSize(limit int) int {
	return max(c.Samples, 2*limit)
}

// control is the limiter's state between windows.
type control struct {
	// limit is the requests it lets be in flight.
	limit int
	// medians are the last windows' medians, the oldest first (at most Memory).
	medians []time.Duration
	// windows counts the windows since the last probe; probing is set
	// while a probe's window runs, resume is the limit after it.
	windows int
	probing bool
	resume  int
}

// baseline is the lowest of the remembered medians: the latency of an
// unloaded server, as near as the last windows tell. Pure.
func (s control) baseline() time.Duration {
	if len(s.medians) == 0 {
		return 0
	}
	return slices.Min(s.medians)
}

// afterWindow decides the limit after a window whose median latency was m:
// the window joins the remembered ones, then the limit grows by one while
// m is within Tolerance of the baseline, else shrinks in proportion to how
// far beyond it is (at most halved), as TCP Vegas and Netflix's gradient
// concurrency limit do. A probe's window only measures: the limit it
// interrupted resumes. Every ProbeEvery windows the next is a probe. Pure.
func (c Config) afterWindow(s control, m time.Duration) control {
	medians := append(slices.Clone(s.medians), m)
	if len(medians) > max(1, c.Memory) {
		medians = medians[len(medians)-max(1, c.Memory):]
	}
	s.medians = medians
	if s.probing {
		s.limit, s.probing, s.windows = s.resume, false, 0
		return s
	}
	s.limit = nextLimit(c, s.limit, m, s.baseline())
	if s.windows++; c.ProbeEvery > 0 && s.windows >= c.ProbeEvery && s.limit > 1 {
		s.probing, s.resume, s.limit = true, s.limit, 1
	}
	return s
}

// nextLimit is the limit after a window whose median latency was median,
// against the baseline. Pure.
func nextLimit(c Config, limit int, median, baseline time.Duration) int {
	if baseline <= 0 || median <= 0 {
		return limit
	}
	ratio := float64(median) / float64(baseline)
	if ratio <= c.Tolerance {
		return min(c.MaxInflight, limit+1)
	}
	return max(1, int(float64(limit)*max(0.5, c.Tolerance/ratio)))
}

// overloaded is the limit after a refusal that says the server is overloaded. Pure.
func overloaded(limit int) int {
	return max(1, limit/2)
}

// median of latencies (which it sorts). Pure.
func median(latencies []time.Duration) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	slices.Sort(latencies)
	return latencies[len(latencies)/2]
}
