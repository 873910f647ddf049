package transient

import (
	"context"
	"errors"
	"net/http"
	"time"

	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// DefaultBackoff is the in-place schedule: six tries, 50 ms doubling to
// 800 ms between them, each wait with up to half again of jitter: 1.55 to
// 2.3 s in all. At a tenth of requests failing, all six fail once in a
// million requests; an API server down for longer fails the attempt, which
// the controller's capped backoff then resumes.
var DefaultBackoff = wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 6}

// Retrier retries requests that fail transiently.
type Retrier struct {
	// Backoff is the schedule; a zero Backoff is DefaultBackoff.
	Backoff wait.Backoff
	// Permanent, when set, tells an error that looks transient but is not
	// (a 500 that names a webhook which cannot be called comes back the
	// same until someone acts): it is returned at once.
	Permanent func(error) bool
	// OnRetry, when set, is told of each retry: the verb and the error.
	OnRetry func(verb string, err error)
}

// Is reports whether err is a failure that the same request, sent again
// a moment later, may not meet: the API server's 500, 502, 503 and 504,
// its ServerTimeout and TooManyRequests, and a connection that was refused,
// reset, closed or lost, or a stream the server reset. A cancelled or
// expired context is not.
func Is(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var stream http2.StreamError
	switch {
	case apierrors.IsInternalError(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err):
		return true
	case statusCode(err) == http.StatusBadGateway:
		return true
	case utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err), utilnet.IsHTTP2ConnectionLost(err),
		utilnet.IsConnectionRefused(err), errors.As(err, &stream):
		return true
	}
	return false
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// LostReply is the error of a write retried after a try whose outcome was
// not known (the API server may have done it and its reply was lost), when
// the retry met a Conflict or AlreadyExists (possibly the trace of that
// earlier try) or every try failed: the write may have been done. The
// caller reads the object and counts the write as done when it finds what
// it wrote. apierrors' predicates see through it.
type LostReply struct{ Err error }

func (e *LostReply) Error() string {
	return e.Err.Error() + " (after an earlier try whose reply was lost)"
}

func (e *LostReply) Unwrap() error { return e.Err }

// WasLost reports whether err is a LostReply.
func WasLost(err error) bool {
	var lost *LostReply
	return errors.As(err, &lost)
}

// Write runs a write, retried while it fails transiently. When a try
// failed with its outcome unknown and a later one meets a Conflict or
// AlreadyExists, or fails transiently too, the error is a LostReply.
func (r Retrier) Write(ctx context.Context, verb string, call func() error) error {
	unknown, err := r.do(ctx, verb, call)
	if unknown && (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || Is(err)) {
		return &LostReply{Err: err}
	}
	return err
}

// Delete runs a DELETE, retried while it fails transiently. A retry that
// finds the object gone after a try whose outcome was unknown is that
// try's success: nil, so that the object is counted once as deleted.
func (r Retrier) Delete(ctx context.Context, call func() error) error {
	unknown, err := r.do(ctx, "delete", call)
	if unknown && apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// do runs call with retry.OnError; unknown reports whether a try failed
// in a way that leaves its outcome unknown (anything but a 429 or 503,
// which the API server answers before it acts).
func (r Retrier) do(ctx context.Context, verb string, call func() error) (unknown bool, err error) {
	backoff := r.Backoff
	if backoff.Steps == 0 {
		backoff = DefaultBackoff
	}
	var last error
	retriable := func(err error) bool {
		if ctx.Err() != nil || !Is(err) || r.Permanent != nil && r.Permanent(err) {
			return false
		}
		if !apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err) {
			unknown = true
		}
		last = err
		return true
	}
	err = retry.OnError(backoff, retriable, func() error {
		if last != nil && r.OnRetry != nil {
			r.OnRetry(verb, last)
		}
		return call()
	})
	return unknown, err
}
