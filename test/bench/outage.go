package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/faultproxy"
)

// Outage is one uninstall whose API server refuses every request of
// csv-cleaner's for a while from the CSV's deletion on, then recovers.
type Outage struct {
	Operands int
	// Down is how long every request was refused.
	Down time.Duration
	// Resumed runs from the recovery to the CSV being gone.
	Resumed time.Duration
	// Refused counts the requests refused during the outage;
	// FailedAttempts the attempts that failed (csv_cleaner_failed_attempts_total).
	Refused        int
	FailedAttempts float64
}

// MeasureOutage uninstalls n operands with csv-cleaner behind a fault proxy
// that refuses every request (500, 503 and 429 with Retry-After: 1) for
// down from the CSV's deletion, then forwards everything again: how soon
// after the recovery the uninstall completes is what the cap on the wait
// between failed attempts (cleanup.MaxRetryDelay) bounds.
func (e *Env) MeasureOutage(ctx context.Context, n int, down time.Duration) (Outage, error) {
	res := Outage{Operands: n, Down: down}
	proxy, kubeconfig, err := e.faultProxy("outage")
	if err != nil {
		return res, err
	}
	defer proxy.Close()
	var (
		mu        sync.Mutex
		recovered time.Time
	)
	run := throughputRun{id: fmt.Sprintf("outage%d", n), name: "csv-cleaner-outage-" + strconv.Itoa(n),
		args: []string{"--kubeconfig=" + kubeconfig},
		onDelete: func() {
			proxy.SetRates(faultproxy.Rates{Refused: 1})
			time.AfterFunc(down, func() {
				mu.Lock()
				defer mu.Unlock()
				proxy.SetRates(faultproxy.Rates{})
				recovered = time.Now()
			})
		}}
	tp, m, err := e.throughput(ctx, n, run)
	if err != nil {
		return res, err
	}
	mu.Lock()
	defer mu.Unlock()
	if recovered.IsZero() {
		return res, fmt.Errorf("the uninstall completed during the outage")
	}
	res.Resumed = tp.Uninstall - down
	res.Refused = Faults{Injected: proxy.Injected()}.injectedTotal()
	res.FailedAttempts = m.Sum("csv_cleaner_failed_attempts_total", nil)
	return res, nil
}

func (r Report) outageWorkload() string {
	if r.Outage == nil {
		return "not run."
	}
	return fmt.Sprintf("an uninstall of %d operands (the throughput workload) whose API server refuses every request of csv-cleaner's (500, 503 and 429 with `Retry-After: 1`, evenly) for %s from the CSV's deletion, then answers again. `outage_resumed_seconds` runs from the recovery to the CSV being gone: csv-cleaner's wait between failed attempts is capped at %s, and an attempt retries each request in place for up to 2.3 s, so the goal is at most their sum. controller-runtime's default backoff doubles from 5 ms to 1,000 s: after a two-minute outage its next attempt could be two minutes away, after ten minutes, a quarter of an hour.", r.Outage.Operands, r.Outage.Down, cleanup.MaxRetryDelay)
}
