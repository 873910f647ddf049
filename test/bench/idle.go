package bench

import (
	"context"
	"fmt"
	"time"
)

// Idle is what csv-cleaner asks of the API server while nothing happens.
type Idle struct {
	Managed int
	Window  time.Duration
	// Writes are csv-cleaner's create, update, patch and delete requests in
	// the window, and ListsPerMinute and WatchesPerMinute its list and watch
	// requests per minute: its own csv_cleaner_client_requests_total, which
	// names each request by the verb the API server authorizes.
	Writes                           float64
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
	before, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	time.Sleep(window)
	after, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	b, a := before.SumBy("csv_cleaner_client_requests_total", "verb"), after.SumBy("csv_cleaner_client_requests_total", "verb")
	// Its informers list through a watch (client-go's streaming lists), so a
	// count of lists may well be zero; watches and its finalizer patches since
	// it started may not.
	if a["watch"] == 0 || a["patch"] == 0 {
		return res, fmt.Errorf("csv-cleaner's csv_cleaner_client_requests_total did not count its informers' watches and its finalizer patches since it started: %v", a)
	}
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		res.Writes += a[verb] - b[verb]
	}
	res.ListsPerMinute = (a["list"] - b["list"]) / window.Minutes()
	res.WatchesPerMinute = (a["watch"] - b["watch"]) / window.Minutes()
	return res, nil
}
