package cleanup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// MaxRetryDelay caps the wait between two failed attempts of one object (not
// controller-runtime's 1,000 s): an uninstall resumes at most this long after
// the API server recovers. docs/faults.md has the measurements behind 10 s.
const MaxRetryDelay = 10 * time.Second

// RetryingAfter is how many failed attempts in a row of one CSV make its
// record say Retrying, with a Warning Event once.
const RetryingAfter = 3

// RateLimiter is each controller's: controller-runtime's default (per item
// exponential from 5 ms, and 10 per second overall with bursts of 100)
// with the per-item wait capped at MaxRetryDelay rather than 1,000 s. A
// failed attempt waits it alone (SettleAttempt returns the error).
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(failureBackoff(),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)})
}

// failureBackoff waits 5 ms after a first failure, doubling up to MaxRetryDelay.
func failureBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay)
}

// stepError names the part of an attempt that failed, for the log, the
// record and csv_cleaner_failed_attempts_total.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return "step " + e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// InStep names the part of an attempt err failed in; nil stays nil, and a named one keeps its name.
func InStep(step string, err error) error {
	var named *stepError
	if err == nil || errors.As(err, &named) {
		return err
	}
	return &stepError{step: step, err: err}
}

// stepOf is the step an error of an attempt failed in.
func stepOf(err error) string {
	var named *stepError
	if errors.As(err, &named) {
		return named.step
	}
	return "reconcile"
}

// SettleAttempt returns a failed attempt to controller-runtime (its error
// metric and RateLimiter), counts it by step, and from the RetryingAfter-th
// failure in a row says Retrying in the record with a Warning Event once; a
// success forgets the failures. docs/metrics.md lists the metrics.
func (e *Engine) SettleAttempt(ctx context.Context, kind RecordKind, req reconcile.Request, res ctrl.Result, err error) (ctrl.Result, error) {
	if err == nil {
		e.failures.Forget(req)
		return res, nil
	}
	if ctx.Err() != nil {
		return res, err // stopping: the next csv-cleaner to run goes on
	}
	step := stepOf(err)
	failedAttempts.WithLabelValues(kind.Controller, step).Inc()
	delay := e.failures.When(req)
	n := e.failures.NumRequeues(req)
	log := logr.FromContextOrDiscard(ctx).WithValues("object", req.NamespacedName)
	log.Info("Attempt failed; trying again after the backoff", "step", step, "failuresInARow", n, "retryIn", delay.String())
	if n >= RetryingAfter {
		e.noteRetrying(logr.NewContext(ctx, log), kind, req.NamespacedName, n, step, err, time.Now().Add(delay))
	}
	return ctrl.Result{}, err
}

// noteRetrying shows failures that go on: the record's Retrying condition,
// when the owner of kind has a record of an uninstall under way, and on
// the first time in a row a Warning Event on it. What it cannot write is
// logged.
func (e *Engine) noteRetrying(ctx context.Context, kind RecordKind, key types.NamespacedName, n int, step string, cause error, next time.Time) {
	log := logr.FromContextOrDiscard(ctx)
	subject, obj := kind.subject(), kind.empty()
	if n == RetryingAfter {
		if err := e.Client.Get(ctx, key, subject); err == nil {
			e.Event(subject, corev1.EventTypeWarning, "Retrying", "Retry",
				"%d attempts in a row failed (step %s); csv-cleaner goes on trying, at least every %s; last error: %s", n, step, MaxRetryDelay, short(cause))
		}
	}
	if err := e.APIReader.Get(ctx, key, obj); err != nil {
		log.V(1).Info("Not marking the uninstall record Retrying", "error", err.Error())
		return
	}
	rec := newRecord(obj)
	switch rec.st.Phase {
	case "", cleanupv1alpha1.PhaseCompleted, cleanupv1alpha1.PhaseSkipped:
		return // no uninstall under way
	}
	rec.prev = cleanupv1alpha1.UninstallStatus{}
	e.pending.apply(rec) // what the failed attempt could not write goes with the mark
	rec.retrying(n, step, cause, next)
	if err := e.save(ctx, rec); err != nil {
		log.Info("Could not mark the uninstall record Retrying", "error", err.Error())
	}
}

// short bounds an error's text for a condition or an Event.
func short(err error) string {
	const most = 1000
	s := err.Error()
	if len(s) > most {
		s = s[:most] + " …"
	}
	return s
}

// retrying: attempts keep failing; the condition says how many, the last
// error and when the next one comes.
func (rec *record) retrying(n int, step string, cause error, next time.Time) {
	rec.setCondition(cleanupv1alpha1.ConditionRetrying, metav1.ConditionTrue, "AttemptsFailing",
		fmt.Sprintf("%d attempts in a row failed, the last in step %s: %s; the next attempt is at %s",
			n, step, short(cause), next.UTC().Format(time.RFC3339)))
}

// recovered: an attempt succeeded; a Retrying condition turns False.
func (rec *record) recovered() {
	if meta.IsStatusConditionTrue(rec.st.Conditions, cleanupv1alpha1.ConditionRetrying) {
		rec.setCondition(cleanupv1alpha1.ConditionRetrying, metav1.ConditionFalse, "Succeeded", "The last attempt succeeded")
	}
}
