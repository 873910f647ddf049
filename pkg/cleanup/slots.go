package cleanup

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Slots bound the requests one uninstall has at the API server at once
// (DeleteWorkers of them), whatever kinds they are of. A request holds its
// slot in the transport (holdSlot) while the API server has it, and not
// while client-go waits out a 429's Retry-After or Retry waits to try
// again: a refused request never idles a slot, so that the deletes of an
// uninstall go on at the rate the API server takes them.
type slotsKey struct{}

// newSlots makes the slots of one uninstall.
func (e *Engine) newSlots() chan struct{} { return make(chan struct{}, max(1, e.DeleteWorkers)) }

// withSlots makes the requests sent with ctx hold one of slots each.
func withSlots(ctx context.Context, slots chan struct{}) context.Context {
	return context.WithValue(ctx, slotsKey{}, slots)
}

// holdSlot wraps a client's transport (ClientConfig): a request whose
// context carries slots (withSlots) takes one for its round trip.
func holdSlot(next http.RoundTripper) http.RoundTripper {
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		slots, ok := req.Context().Value(slotsKey{}).(chan struct{})
		if !ok {
			return next.RoundTrip(req)
		}
		select {
		case slots <- struct{}{}:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		defer func() { <-slots }()
		return next.RoundTrip(req)
	})
}
