package throttle

import (
	"testing"
	"time"
)

func TestNextLimit(t *testing.T) {
	c := Config{MaxInflight: 12, Tolerance: 2}
	ms := time.Millisecond
	for _, tt := range []struct {
		name             string
		limit            int
		median, baseline time.Duration
		want             int
	}{
		{"an unloaded server: one more", 4, 4 * ms, 4 * ms, 5},
		{"within tolerance: one more", 4, 8 * ms, 4 * ms, 5},
		{"never beyond MaxInflight", 12, 4 * ms, 4 * ms, 12},
		{"beyond tolerance: down in proportion", 9, 12 * ms, 4 * ms, 6},
		{"far beyond: halved at most", 10, 40 * ms, 4 * ms, 5},
		{"never below one", 1, 40 * ms, 4 * ms, 1},
		{"no baseline yet: unchanged", 4, 4 * ms, 0, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextLimit(c, tt.limit, tt.median, tt.baseline); got != tt.want {
				t.Errorf("nextLimit = %v, want %v", got, tt.want)
			}
		})
	}
	if got := overloaded(6); got != 3 {
		t.Errorf("overloaded(6) = %v, want 3", got)
	}
	if got := overloaded(1); got != 1 {
		t.Errorf("overloaded(1) = %v, want 1", got)
	}
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Errorf("median = %v, want 3", got)
	}
}

func TestAfterWindowRemembersTheBaseline(t *testing.T) {
	c := Config{MaxInflight: 12, Tolerance: 2, Memory: 4}
	ms := time.Millisecond
	s := control{limit: 2}
	for i, st := range []struct {
		median       time.Duration
		wantLimit    int
		wantBaseline time.Duration
	}{
		{2 * ms, 3, 2 * ms},  // the first window sets the baseline
		{4 * ms, 4, 2 * ms},  // within twice it
		{8 * ms, 2, 2 * ms},  // four times: halved
		{3 * ms, 3, 2 * ms},  // the 2 ms window is still remembered
		{6 * ms, 4, 3 * ms},  // it is forgotten: 3 ms is the lowest of the last four, and 6 is within twice it
		{30 * ms, 2, 3 * ms}, // far beyond: halved
	} {
		s = c.afterWindow(s, st.median)
		if s.limit != st.wantLimit || s.baseline() != st.wantBaseline {
			t.Fatalf("window %d (median %s): limit %d, baseline %s; want %d, %s", i, st.median, s.limit, s.baseline(), st.wantLimit, st.wantBaseline)
		}
	}
}

func TestAfterWindowProbes(t *testing.T) {
	c := Config{MaxInflight: 12, Tolerance: 2, Memory: 30, ProbeEvery: 2}
	ms := time.Millisecond
	// A limiter that started on a loaded server: 30 ms is all it has seen.
	s := control{limit: 8}
	s = c.afterWindow(s, 30*ms)
	if s.limit != 9 || s.probing {
		t.Fatalf("first window: %+v, want limit 9, no probe", s)
	}
	s = c.afterWindow(s, 30*ms)
	if s.limit != 1 || !s.probing || s.resume != 10 {
		t.Fatalf("second window: %+v, want a probe at limit 1 that resumes 10", s)
	}
	s = c.afterWindow(s, 5*ms) // the requests, alone, take 5 ms
	if s.limit != 10 || s.probing || s.baseline() != 5*ms {
		t.Fatalf("after the probe: %+v (baseline %s), want limit 10 resumed, baseline 5ms", s, s.baseline())
	}
	s = c.afterWindow(s, 30*ms)
	if s.limit != 5 {
		t.Fatalf("a window at 6 times the probed baseline: limit %d, want halved to 5", s.limit)
	}
}
