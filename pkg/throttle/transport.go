package throttle

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type limiterKey struct{}

// With marks the requests made with ctx to be paced by l.
func With(ctx context.Context, l *Limiter) context.Context {
	if l == nil {
		return ctx
	}
	return context.WithValue(ctx, limiterKey{}, l)
}

// Transport paces each request whose context carries a Limiter (With):
// it waits for a place, times the request to its answer and tells the
// limiter. Other requests pass untouched.
func Transport(next http.RoundTripper) http.RoundTripper {
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l, ok := req.Context().Value(limiterKey{}).(*Limiter)
		if !ok {
			return next.RoundTrip(req)
		}
		if err := l.Acquire(req.Context()); err != nil {
			return nil, err
		}
		start := time.Now()
		resp, err := next.RoundTrip(req)
		l.Done(time.Since(start), overload(req.Context(), resp, err))
		return resp, err
	})
}

// overload says whether an answer tells of an overloaded API server: a 429,
// a 5xx, or no answer at all (but for the caller giving up).
func overload(ctx context.Context, resp *http.Response, err error) bool {
	if err != nil {
		return ctx.Err() == nil
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= http.StatusInternalServerError
}
