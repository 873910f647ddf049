package transient

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			case transientStatus(resp.StatusCode) && !storeReadError(resp):
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

// storeReadError reports whether a 500 says that the API server cannot read
// objects from its storage (a conversion webhook that fails, data it cannot
// decrypt): a LIST's StorageReadError, or a GET's corrupt object. It is the
// same until someone acts, so not retried. The body it reads is put back
// for the caller.
func storeReadError(resp *http.Response) bool {
	if resp.StatusCode != http.StatusInternalServerError {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	// A Status in JSON, or in protobuf (the metadata client's), whose
	// strings are their bytes after the envelope's magic number.
	return bytes.Contains(body, []byte(`"reason":"`+metav1.StatusReasonStoreReadError+`"`)) ||
		bytes.HasPrefix(body, protobufMagic) && bytes.Contains(body, []byte(metav1.StatusReasonStoreReadError)) ||
		bytes.Contains(body, []byte("StorageError: corrupt object"))
}

// protobufMagic starts every protobuf body kube-apiserver sends.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

func transientStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}
