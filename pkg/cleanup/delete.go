package cleanup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// uninstall is the state of one reconcile of a deleting CSV. Everything in
// it is read from the cluster in this reconcile; nothing is remembered
// between reconciles except what the record's status says.
type uninstall struct {
	// csv is the uninstalled CSV; nil for a ClusterExtension.
	csv *operatorsv1alpha1.ClusterServiceVersion
	// subject is what is uninstalled, the CSV or the ClusterExtension: the
	// Events regard it.
	subject client.Object
	// title names it in messages ("CSV ns/name", "ClusterExtension name").
	title string
	// deletion is its deletionTimestamp.
	deletion time.Time
	// operatorUnavailable says why its operator is unavailable, nil while it runs.
	operatorUnavailable func(context.Context) (*plan.Problem, error)
	settings            plan.Settings
	// kind labels the metrics: KindCSV or KindExtension.
	kind    string
	verdict plan.Verdict
	rec     *record
	now     time.Time
	// scopes are the owned CRDs as the operand step found them.
	scopes []plan.CRDScope
}

// timeout says whether the uninstall's operandTimeout has passed, as of this reconcile.
func (u *uninstall) timeout() plan.Timeout {
	return plan.TimeoutOf(u.settings, u.deletion, u.now)
}

// step is one idempotent step of an uninstall. done is false while it waits
// on the cluster; a *plan.Problem error blocks the uninstall until it is fixed.
type step struct {
	name string
	// label names the step in csv_cleaner_failed_attempts_total.
	label string
	run   func(context.Context, *uninstall) (done bool, err error)
}

// reconcileDelete classifies a deleting CSV's deletion and, for a real
// uninstall, runs the steps in order, releasing the finalizer last. The
// record says Releasing before the finalizer's removal and Completed only
// once it has succeeded.
func (r *Reconciler) reconcileDelete(ctx context.Context, cached client.Object, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	if !r.Finalizers.HeldBy(cached.GetFinalizers()) {
		return ctrl.Result{}, errors.Join(inStep("release", r.releaseRBAC(ctx, csvKey(cached))),
			inStep("record", r.finishRelease(ctx, csvKey(cached), cached)))
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), csv); err != nil {
		return ctrl.Result{}, inStep("read", client.IgnoreNotFound(err))
	}
	if !r.Finalizers.HeldBy(csv.Finalizers) || csv.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	rec, err := r.openRecord(ctx, csv)
	if err != nil {
		return ctrl.Result{}, inStep("record", err)
	}
	defer func() { progress.observe(csvKey(csv), rec.st) }() // rec may be read again below
	now := time.Now()

	// An upgrade is an upgrade whether a policy selects the CSV or not (an
	// earlier csv-cleaner's own CSV, which no policy needs to select, is one).
	in, err := r.gather().Classify(ctx, csv)
	if err != nil {
		return ctrl.Result{}, inStep("classify", err)
	}
	verdict := plan.Classify(in)
	if verdict.SkipReason != "" {
		return ctrl.Result{}, r.skip(ctx, csv, rec, verdict, now)
	}
	if policy == nil {
		return ctrl.Result{}, r.skip(ctx, csv, rec, plan.Verdict{SkipReason: cleanupv1alpha1.ReasonUnmanaged,
			Message: "no CleanupPolicy selects the CSV any more; nothing was deleted"}, now)
	}

	u := &uninstall{csv: csv, subject: csv, title: "CSV " + csvKey(csv).String(), deletion: csv.DeletionTimestamp.Time,
		operatorUnavailable: func(ctx context.Context) (*plan.Problem, error) { return r.gather().OperatorUnavailable(ctx, csv) },
		settings:            plan.SettingsOf(policy), verdict: verdict, rec: rec, now: now}
	// The phase is written before anything is deleted (unless the
	// acknowledger has written it already): an uninstall shows Deleting,
	// and what it is about to do, from its start.
	if u.rec, err = r.startRecord(ctx, csv, rec, u.settings, policy.Name, verdict, now); err != nil {
		return ctrl.Result{}, inStep("record", err)
	}
	rec = u.rec
	steps := []step{
		{"operands", "operands", r.operandStep},
		{"cluster RBAC and webhooks", "clusterObjects", r.clusterObjectStep},
		{"CRDs", "crds", r.crdStep},
	}
	rec.keptOn = true // the steps name what they keep afresh in each pass
	for _, s := range steps {
		done, err := s.run(ctx, u)
		var problem *plan.Problem
		if refusal, ok := ClassifyRefusal(err); ok && !errors.As(err, &problem) {
			// A request of this step that the API server refuses is never silent.
			err = &plan.Problem{Reason: refusal.Reason, Object: "step " + s.name, Message: err.Error() + "; " + refusal.advice()}
		}
		switch {
		case errors.As(err, &problem):
			log.Info("Uninstall is blocked", "step", s.name, "reason", problem.Reason, "object", problem.Object, "message", problem.Message)
			r.block(csv, rec, problem)
			rec.recovered()
			return ctrl.Result{RequeueAfter: u.requeueAfter()}, inStep("record", r.save(ctx, rec))
		case err != nil:
			return ctrl.Result{}, errors.Join(inStep(s.label, err), r.save(ctx, rec))
		case !done:
			log.V(1).Info("Waiting", "step", s.name, "remaining", rec.st.Remaining)
			rec.deleting(fmt.Sprintf("Waiting for %s: %d objects remaining", s.name, rec.st.Remaining))
			rec.recovered()
			return ctrl.Result{RequeueAfter: u.requeueAfter()}, inStep("record", r.save(ctx, rec))
		}
	}

	// Releasing first: should the finalizer's removal succeed and its reply
	// be lost, or the write below fail, the record never said Completed
	// while the CSV was held, and the next attempt (or the CSV's removal)
	// finds it Releasing and completes it (finishRelease).
	if err := rec.finished(); err != nil {
		return ctrl.Result{}, errors.Join(inStep("release", err), r.save(ctx, rec))
	}
	rec.releasing("Everything the policy asked for is done; removing csv-cleaner's finalizer from the CSV")
	rec.recovered()
	if err := r.save(ctx, rec); err != nil {
		return ctrl.Result{}, inStep("record", err)
	}
	log.Info("Releasing the CSV: the uninstall is complete")
	if err := r.patchFinalizers(ctx, csv, r.Finalizers.Remove); err != nil {
		return ctrl.Result{}, inStep("release", err)
	}
	return ctrl.Result{}, inStep("record", r.complete(ctx, rec, csv, csv.DeletionTimestamp.Time))
}

// complete writes Completed into the record of a released CSV, and the
// Event and metrics once.
func (r *Reconciler) complete(ctx context.Context, rec *record, csv client.Object, deleted time.Time) error {
	done := time.Now()
	rec.completed(metav1.NewTime(done), "Everything the policy asked for is done; the CSV is released")
	if err := r.save(ctx, rec); err != nil {
		return err
	}
	r.starts.forget(csv.GetUID())
	r.revisions.forget(csv.GetUID())
	if rec.prev.Phase != cleanupv1alpha1.PhaseCompleted {
		took := done.Sub(deleted)
		uninstalls.WithLabelValues(KindCSV, resultCompleted, "").Inc()
		uninstallDuration.WithLabelValues(KindCSV).Observe(took.Seconds())
		r.event(csv, corev1.EventTypeNormal, "CleanupCompleted", "Uninstall", "Uninstall completed in %s", took.Round(time.Second))
	}
	return nil
}

// finishRelease completes the record of a CSV that csv-cleaner released
// (the record says Releasing) when the attempt that released it could not
// say so: the reply was lost, or the record's write failed. csv is the CSV
// still being deleted by others' finalizers, or nil once it is gone; a
// record of another CSV of the same name is left alone.
func (r *Reconciler) finishRelease(ctx context.Context, key types.NamespacedName, csv client.Object) error {
	obj := &cleanupv1alpha1.CSVCleanup{}
	if err := r.APIReader.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if obj.Status.Phase != cleanupv1alpha1.PhaseReleasing || csv != nil && csv.GetUID() != obj.Status.CSVUID {
		return nil
	}
	rec := newRecord(obj)
	deleted := time.Now()
	if obj.Status.StartTime != nil {
		deleted = obj.Status.StartTime.Time
	}
	if csv == nil {
		gone := csvMetadata()
		gone.Namespace, gone.Name, gone.UID = key.Namespace, key.Name, obj.Status.CSVUID
		csv = gone
	} else if t := csv.GetDeletionTimestamp(); t != nil {
		deleted = t.Time
	}
	logr.FromContextOrDiscard(ctx).Info("Completing the uninstall record: the CSV was released", "csv", key)
	rec.recovered()
	return r.complete(ctx, rec, csv, deleted)
}

// skip records a deletion that is not an uninstall and releases the CSV at
// once: csv-cleaner never holds up an upgrade, a reinstall or OLM's copies.
func (r *Reconciler) skip(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, rec *record, v plan.Verdict, now time.Time) error {
	logr.FromContextOrDiscard(ctx).Info("Releasing the CSV without deleting anything", "reason", v.SkipReason, "message", v.Message)
	rec.skipped(v.SkipReason, v.Message, metav1.NewTime(now))
	rec.recovered()
	if err := r.save(ctx, rec); err != nil {
		return inStep("record", err)
	}
	if err := r.releaseRBAC(ctx, csvKey(csv)); err != nil {
		return inStep("release", err)
	}
	if err := r.patchFinalizers(ctx, csv, r.Finalizers.Remove); err != nil {
		return inStep("release", err)
	}
	r.starts.forget(csv.UID)
	r.revisions.forget(csv.UID)
	if rec.prev.Phase != cleanupv1alpha1.PhaseSkipped {
		uninstalls.WithLabelValues(KindCSV, resultSkipped, v.SkipReason).Inc()
		r.event(csv, corev1.EventTypeNormal, "CleanupSkipped", "Uninstall", "Nothing deleted (%s): %s", v.SkipReason, v.Message)
	}
	return nil
}

// block marks the uninstall Blocked; the Event and metric fire only on a transition.
func (r *Reconciler) block(csv *operatorsv1alpha1.ClusterServiceVersion, rec *record, p *plan.Problem) {
	rec.blocked(p.Reason, p.Message)
	if rec.prev.Phase != cleanupv1alpha1.PhaseBlocked || rec.prev.Reason != p.Reason {
		uninstalls.WithLabelValues(KindCSV, resultBlocked, p.Reason).Inc()
		r.event(csv, corev1.EventTypeWarning, "Blocked", "Uninstall", "Uninstall blocked (%s) on %s: %s", p.Reason, p.Object, p.Message)
	}
}

// requeueAfter backs off with the uninstall's age — soon at first, at most
// every 30 s — and wakes up when the operand timeout falls due.
func (u *uninstall) requeueAfter() time.Duration {
	elapsed := u.now.Sub(u.deletion)
	d := min(max(elapsed/4, 500*time.Millisecond), 30*time.Second)
	if untilTimeout := u.settings.OperandTimeout - elapsed; untilTimeout > 0 {
		d = min(d, untilTimeout+100*time.Millisecond)
	}
	return d
}

func (r *Reconciler) event(regarding runtime.Object, eventType, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(regarding, nil, eventType, reason, action, note, args...)
	}
}
