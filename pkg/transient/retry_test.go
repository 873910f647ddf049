package transient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

var gr = schema.GroupResource{Group: "example.com", Resource: "widgets"}

func reset() error {
	return &url.Error{Op: "Delete", URL: "https://127.0.0.1/x", Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}
}

func TestIs(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                      {nil, false},
		"500 etcd timed out":       {apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		"503":                      {apierrors.NewServiceUnavailable("unavailable"), true},
		"429":                      {apierrors.NewTooManyRequests("slow down", 1), true},
		"504":                      {apierrors.NewTimeoutError("timed out", 1), true},
		"server timeout":           {apierrors.NewServerTimeout(gr, "list", 1), true},
		"502 from a balancer":      {apierrors.NewGenericServerResponse(502, "get", gr, "w", "bad gateway", 0, true), true},
		"connection reset":         {reset(), true},
		"unexpected EOF":           {&url.Error{Op: "Get", URL: "https://127.0.0.1/x", Err: io.ErrUnexpectedEOF}, true},
		"http2 stream reset":       {&url.Error{Op: "Patch", URL: "https://127.0.0.1/x", Err: http2.StreamError{StreamID: 3, Code: http2.ErrCodeInternal}}, true},
		"connection refused":       {&url.Error{Op: "Get", URL: "https://127.0.0.1/x", Err: syscall.ECONNREFUSED}, true},
		"404":                      {apierrors.NewNotFound(gr, "w"), false},
		"409":                      {apierrors.NewConflict(gr, "w", errors.New("changed")), false},
		"403":                      {apierrors.NewForbidden(gr, "w", errors.New("no")), false},
		"400":                      {apierrors.NewBadRequest("bad"), false},
		"context cancelled":        {fmt.Errorf("get: %w", context.Canceled), false},
		"context deadline":         {&url.Error{Op: "Get", URL: "https://127.0.0.1/x", Err: context.DeadlineExceeded}, false},
		"wrapped 500 is still one": {fmt.Errorf("step operands: %w", apierrors.NewInternalError(errors.New("x"))), true},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("%s: Is(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}

// calls returns a call that fails with errs in turn, then succeeds, and counts its tries.
func calls(errs ...error) (func() error, *int) {
	n := 0
	return func() error {
		n++
		if n <= len(errs) {
			return errs[n-1]
		}
		return nil
	}, &n
}

var fast = Retrier{Backoff: wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}}

func TestRetrier(t *testing.T) {
	internal := apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	busy := apierrors.NewTooManyRequests("slow down", 1)
	notFound := apierrors.NewNotFound(gr, "w")
	conflict := apierrors.NewConflict(gr, "w", errors.New("the object has been modified"))
	exists := apierrors.NewAlreadyExists(gr, "w")
	webhook := apierrors.NewInternalError(errors.New(`failed calling webhook "deny.example.com"`))
	for name, tc := range map[string]struct {
		run       func(Retrier, func() error) error
		errs      []error
		permanent bool
		wantErr   func(error) bool
		wantLost  bool
		wantTries int
	}{
		"a write retried until it succeeds": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "patch", f) },
			errs: []error{busy, reset()}, wantErr: isNil, wantTries: 3,
		},
		"a write that keeps failing fails after the last try": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "patch", f) },
			errs: []error{internal, internal, internal, internal, internal}, wantErr: apierrors.IsInternalError, wantLost: true, wantTries: 4,
		},
		"a write refused every time was never done": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "patch", f) },
			errs: []error{busy, busy, busy, busy, busy}, wantErr: apierrors.IsTooManyRequests, wantTries: 4,
		},
		"a refusal is not retried": {
			run:  func(r Retrier, f func() error) error { return r.Delete(context.Background(), f) },
			errs: []error{apierrors.NewForbidden(gr, "w", errors.New("no"))}, wantErr: apierrors.IsForbidden, wantTries: 1,
		},
		"a permanent 500 is not retried": {
			run:  func(r Retrier, f func() error) error { return r.Delete(context.Background(), f) },
			errs: []error{webhook}, permanent: true, wantErr: apierrors.IsInternalError, wantTries: 1,
		},
		"a delete whose reply was lost and whose retry finds nothing succeeded": {
			run:  func(r Retrier, f func() error) error { return r.Delete(context.Background(), f) },
			errs: []error{reset(), notFound}, wantErr: isNil, wantTries: 2,
		},
		"a delete of an object already gone is NotFound": {
			run:  func(r Retrier, f func() error) error { return r.Delete(context.Background(), f) },
			errs: []error{notFound}, wantErr: apierrors.IsNotFound, wantTries: 1,
		},
		"a delete refused with 429 that then finds nothing did not delete it": {
			run:  func(r Retrier, f func() error) error { return r.Delete(context.Background(), f) },
			errs: []error{busy, notFound}, wantErr: apierrors.IsNotFound, wantTries: 2,
		},
		"a patch whose reply was lost conflicts with itself: a LostReply": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "patch", f) },
			errs: []error{internal, conflict}, wantErr: apierrors.IsConflict, wantLost: true, wantTries: 2,
		},
		"a plain conflict is no LostReply": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "patch", f) },
			errs: []error{conflict}, wantErr: apierrors.IsConflict, wantTries: 1,
		},
		"a create whose reply was lost finds its object: a LostReply": {
			run:  func(r Retrier, f func() error) error { return r.Write(context.Background(), "create", f) },
			errs: []error{reset(), exists}, wantErr: apierrors.IsAlreadyExists, wantLost: true, wantTries: 2,
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := fast
			retries := 0
			r.OnRetry = func(string, error) { retries++ }
			if tc.permanent {
				r.Permanent = func(err error) bool { return errors.Is(err, webhook) }
			}
			f, tries := calls(tc.errs...)
			err := tc.run(r, f)
			if !tc.wantErr(err) {
				t.Errorf("error %v is not the one expected", err)
			}
			if WasLost(err) != tc.wantLost {
				t.Errorf("WasLost(%v) = %v, want %v", err, WasLost(err), tc.wantLost)
			}
			if *tries != tc.wantTries || retries != tc.wantTries-1 {
				t.Errorf("tried %d times with %d retries reported, want %d tries", *tries, retries, tc.wantTries)
			}
		})
	}
}

func TestRetrierStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := fast.Write(ctx, "patch", func() error {
		n++
		cancel()
		return apierrors.NewInternalError(errors.New("x"))
	})
	if n != 1 || !apierrors.IsInternalError(err) {
		t.Errorf("after its context ended it tried %d times and returned %v; want one try and the error", n, err)
	}
}

func isNil(err error) bool { return err == nil }
