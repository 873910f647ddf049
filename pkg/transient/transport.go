package transient

import (
	"errors"
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/util/retry"
)

// errStatus marks a response whose status says the API server failed for a moment.
var errStatus = errors.New("transient status")

// Transport wraps a client's transport so that a read (a GET, not a watch)
// is retried in place while it fails transiently (500, 502, 503, 504, 429, a
// connection error): discovery, the REST mapper and informers' lists
// included. Watches and writes pass through: Client retries writes.
func (r Retrier) Transport(next http.RoundTripper) http.RoundTripper {
	backoff := r.Backoff
	if backoff.Steps == 0 {
		backoff = DefaultBackoff
	}
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || req.URL.Query().Get("watch") == "true" {
			return next.RoundTrip(req)
		}
		var resp *http.Response
		tries := 0
		retriable := func(err error) bool {
			return req.Context().Err() == nil && (errors.Is(err, errStatus) || Is(err))
		}
		err := retry.OnError(backoff, retriable, func() error {
			if resp != nil { // the answer of the try before, which is not returned
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				_ = resp.Body.Close()
			}
			if tries++; tries > 1 && r.OnRetry != nil {
				r.OnRetry("get", errStatus)
			}
			var err error
			resp, err = next.RoundTrip(req)
			switch {
			case err != nil:
				resp = nil
				return err
			case transientStatus(resp.StatusCode):
				return errStatus
			}
			return nil
		})
		if errors.Is(err, errStatus) {
			return resp, nil
		}
		return resp, err
	})
}

func transientStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}
