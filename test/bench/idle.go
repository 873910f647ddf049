package bench

import (
	"context"
	"time"
)

// Idle is what csv-cleaner asks of the API server while nothing happens.
type Idle struct {
	Managed int
	Window  time.Duration
	// Writes are csv-cleaner's own POST, PUT, PATCH and DELETE requests in the window.
	Writes float64
	// ListsPerMinute and WatchesPerMinute are kube-apiserver's LIST and
	// WATCH requests per minute in the window; csv-cleaner is its only client then.
	ListsPerMinute, WatchesPerMinute float64
}

// MeasureIdle grows the fleet to managed real CSVs, starts a fresh
// csv-cleaner, waits until it manages them all and settles, and counts its
// requests over window.
func (e *Env) MeasureIdle(ctx context.Context, f *fleet, managed int, window time.Duration) (Idle, error) {
	res := Idle{Managed: managed, Window: window}
	if err := e.grow(ctx, f, managed, f.copies); err != nil {
		return res, err
	}
	c, err := e.StartCleaner(ctx, "csv-cleaner-idle")
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop(30 * time.Second) }()
	if err := e.waitManaged(ctx, f); err != nil {
		return res, err
	}
	time.Sleep(10 * time.Second)
	clientBefore, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	serverBefore, err := e.APIServerMetrics(ctx)
	if err != nil {
		return res, err
	}
	time.Sleep(window)
	clientAfter, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	serverAfter, err := e.APIServerMetrics(ctx)
	if err != nil {
		return res, err
	}
	before, after := clientBefore.SumBy("rest_client_requests_total", "method"), clientAfter.SumBy("rest_client_requests_total", "method")
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		res.Writes += after[m] - before[m]
	}
	vb, va := serverBefore.SumBy("apiserver_request_total", "verb"), serverAfter.SumBy("apiserver_request_total", "verb")
	res.ListsPerMinute = (va["LIST"] - vb["LIST"]) / window.Minutes()
	res.WatchesPerMinute = (va["WATCH"] - vb["WATCH"]) / window.Minutes()
	return res, nil
}
