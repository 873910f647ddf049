package cleanup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// What the ClusterExtension's controller (pkg/extension) shares with the
// CSV's: the record, the deletion of a CRD's instances (rights checked
// first, pages, workers, refusals, operandTimeout and onTimeout), the
// Events and the metrics. The extension's controller decides with pkg/plan
// and runs its own steps; every step that deletes instances goes through
// Uninstall.DeleteInstances, the same code as a CSV's operand step.

// Subject is what an Uninstall uninstalls, other than a CSV.
type Subject struct {
	// Object is the ClusterExtension (its metadata will do): the Events regard it.
	Object client.Object
	// Title names it in messages, "ClusterExtension <name>".
	Title string
	// OperatorUnavailable says why its operator is unavailable, nil while it runs.
	OperatorUnavailable func(context.Context) (*plan.Problem, error)
	Settings            plan.Settings
	// Cascade is how it is being deleted; the record shows it.
	Cascade plan.Cascade
}

// Uninstall is one pass of a ClusterExtension's uninstall, with its
// ExtensionCleanup record open.
type Uninstall struct {
	r *Reconciler
	u *uninstall
}

// OpenExtensionUninstall opens the ExtensionCleanup record of the deleting
// extension (named after it; created when it does not exist, started
// afresh when it belongs to an earlier extension of the same name).
func (r *Reconciler) OpenExtensionUninstall(ctx context.Context, s Subject, now time.Time) (*Uninstall, error) {
	ext := s.Object
	obj := &cleanupv1alpha1.ExtensionCleanup{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: ext.GetName()}, obj)
	if apierrors.IsNotFound(err) {
		obj = &cleanupv1alpha1.ExtensionCleanup{ObjectMeta: metav1.ObjectMeta{Name: ext.GetName()},
			Spec: cleanupv1alpha1.ExtensionCleanupSpec{ClusterExtensionName: ext.GetName()}}
		logr.FromContextOrDiscard(ctx).Info("Creating the uninstall record")
		err = r.Client.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			err = r.APIReader.Get(ctx, client.ObjectKey{Name: ext.GetName()}, obj)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("getting the uninstall record of ClusterExtension %s: %w", ext.GetName(), err)
	}
	var rec *record
	if obj.Status.ExtensionUID != ext.GetUID() {
		fresh := obj.DeepCopy()
		fresh.Status = cleanupv1alpha1.ExtensionCleanupStatus{ExtensionUID: ext.GetUID()}
		rec = newRecord(fresh)
		rec.base, rec.prev = obj, cleanupv1alpha1.UninstallStatus{}
	} else {
		rec = newRecord(obj)
	}
	r.carryOver(rec)
	// The garbage collector takes the cascade's finalizer away once it is
	// done with the dependents: the record keeps how the deletion began.
	if st := &rec.obj.(*cleanupv1alpha1.ExtensionCleanup).Status; st.Cascade == "" || s.Cascade != plan.CascadeBackground {
		st.Cascade = string(s.Cascade)
	}
	deletion := now
	if t := ext.GetDeletionTimestamp(); t != nil {
		deletion = t.Time
	}
	return &Uninstall{r: r, u: &uninstall{subject: ext, title: s.Title, deletion: deletion, operatorUnavailable: s.OperatorUnavailable,
		settings: s.Settings, rec: rec, now: now, kind: KindExtension}}, nil
}

// Key is the record's key, for the progress metrics.
func (x *Uninstall) key() types.NamespacedName {
	return types.NamespacedName{Name: x.u.subject.GetName()}
}

// Start marks the uninstall as under way (once: the record's startTime),
// saying what it is about to do, with the CleanupStarted Event; a warning,
// when there is one, goes into the record's message and a Warning Event
// (reason warnReason) once too.
func (x *Uninstall) Start(ctx context.Context, policy, why, about, warnReason, warning string) error {
	rec := x.u.rec
	if !rec.start(policy, metav1.NewTime(x.u.now)) {
		return nil
	}
	logr.FromContextOrDiscard(ctx).Info("Starting the uninstall", "policy", policy, "reason", why, "plan", about)
	msg := "Uninstall started: " + about
	if warning != "" {
		msg = warning + "; " + msg
	}
	rec.deleting(msg)
	if err := x.r.save(ctx, rec); err != nil {
		return inStep("record", err)
	}
	x.Event(corev1.EventTypeNormal, "CleanupStarted", "Uninstall", "Uninstall started under CleanupPolicy %s: %s; %s", policy, why, about)
	if warning != "" {
		x.Event(corev1.EventTypeWarning, warnReason, "Uninstall", "%s", warning)
	}
	return nil
}

// Scopes sets the CRDs whose instances the uninstall deals with.
func (x *Uninstall) Scopes(scopes []plan.CRDScope) { x.u.scopes = scopes }

// KindsGone counts, of the kinds the record counts instances of, those
// whose CRD no longer exists (crdKinds are the kinds of every CRD there
// is): none of their instances is left, whatever an earlier pass saw.
func (x *Uninstall) KindsGone(crdKinds map[string]bool) {
	for _, c := range slices.Clone(x.u.rec.st.Counts) {
		if c.Kind != plan.CRDKind && !crdKinds[c.Kind] {
			x.u.rec.count(c.Kind, 0, 0, map[string]int{cleanupv1alpha1.NoteCRDNotFound: 0})
		}
	}
}

// DeleteInstances deletes the instances of the scopes' CRDs in targets as
// plan.PlanOperands decides, exactly as a CSV's operand step does, and
// reports whether none is left.
func (x *Uninstall) DeleteInstances(ctx context.Context, targets plan.NamespaceSet) (bool, error) {
	x.u.rec.keptOn = true
	return x.r.deleteInstances(ctx, x.u, targets)
}

// KeepInstances counts every instance of the scopes' CRDs as kept for reason (operands: Orphan).
func (x *Uninstall) KeepInstances(ctx context.Context, reason string) error {
	x.u.rec.keptOn = true
	return x.r.countKept(ctx, x.u, reason)
}

// InstancesLeft reports whether a CRD has any instance left.
func (x *Uninstall) InstancesLeft(ctx context.Context, s *plan.CRDScope) (bool, error) {
	return x.r.gather().InstancesLeft(ctx, s)
}

// Count records what a step found of one kind (see record.count).
func (x *Uninstall) Count(kind string, found, remaining int, kept map[string]int) {
	x.u.rec.count(kind, found, remaining, kept)
}

// Keep names objects the step keeps.
func (x *Uninstall) Keep(refs ...cleanupv1alpha1.ObjectRef) {
	x.u.rec.keptOn = true
	x.u.rec.keep(refs...)
}

// Event sends an Event on the subject.
func (x *Uninstall) Event(eventType, reason, action, note string, args ...any) {
	x.r.event(x.u.subject, eventType, reason, action, note, args...)
}

// After ends a step: a *plan.Problem (or a refusal) blocks the uninstall,
// with the Event and metric on a transition; another error fails the
// attempt; a step not done waits. proceed is true only when the step is
// done; otherwise the result and error are the reconcile's.
func (x *Uninstall) After(ctx context.Context, step string, done bool, err error) (proceed bool, res ctrl.Result, _ error) {
	rec, log := x.u.rec, logr.FromContextOrDiscard(ctx)
	var problem *plan.Problem
	if refusal, ok := ClassifyRefusal(err); ok && !errors.As(err, &problem) {
		err = &plan.Problem{Reason: refusal.Reason, Object: "step " + step, Message: err.Error() + "; " + refusal.advice()}
	}
	defer func() { progress.observe(x.key(), rec.st) }()
	switch {
	case errors.As(err, &problem):
		log.Info("Uninstall is blocked", "step", step, "reason", problem.Reason, "object", problem.Object, "message", problem.Message)
		rec.blocked(problem.Reason, problem.Message)
		if rec.prev.Phase != cleanupv1alpha1.PhaseBlocked || rec.prev.Reason != problem.Reason {
			uninstalls.WithLabelValues(x.u.kind, resultBlocked, problem.Reason).Inc()
			x.Event(corev1.EventTypeWarning, "Blocked", "Uninstall", "Uninstall blocked (%s) on %s: %s", problem.Reason, problem.Object, problem.Message)
		}
		rec.recovered()
		return false, ctrl.Result{RequeueAfter: x.u.requeueAfter()}, inStep("record", x.r.save(ctx, rec))
	case err != nil:
		return false, ctrl.Result{}, errors.Join(inStep(step, err), x.r.save(ctx, rec))
	case !done:
		log.V(1).Info("Waiting", "step", step, "remaining", rec.st.Remaining)
		rec.deleting(fmt.Sprintf("Waiting for %s: %d objects remaining", step, rec.st.Remaining))
		rec.recovered()
		return false, ctrl.Result{RequeueAfter: x.u.requeueAfter()}, inStep("record", x.r.save(ctx, rec))
	}
	return true, ctrl.Result{}, nil
}

// Releasing says, before the finalizer's removal, that every step is done.
func (x *Uninstall) Releasing(ctx context.Context, msg string) error {
	if err := x.u.rec.finished(); err != nil {
		return inStep("release", err)
	}
	x.u.rec.releasing(msg)
	x.u.rec.recovered()
	return inStep("record", x.r.save(ctx, x.u.rec))
}

// Complete says, once the finalizer's removal succeeded, that the
// uninstall is done, with the CleanupCompleted Event and the metrics once.
func (x *Uninstall) Complete(ctx context.Context, msg string) error {
	rec := x.u.rec
	done := time.Now()
	rec.completed(metav1.NewTime(done), msg)
	if err := x.r.save(ctx, rec); err != nil {
		return inStep("record", err)
	}
	progress.forget(x.key())
	x.r.revisions.forget(x.u.subject.GetUID())
	if rec.prev.Phase != cleanupv1alpha1.PhaseCompleted {
		took := done.Sub(x.u.deletion)
		uninstalls.WithLabelValues(x.u.kind, resultCompleted, "").Inc()
		uninstallDuration.WithLabelValues(x.u.kind).Observe(took.Seconds())
		x.Event(corev1.EventTypeNormal, "CleanupCompleted", "Uninstall", "Uninstall completed in %s", took.Round(time.Second))
	}
	return nil
}

// Skip records a deletion that is not an uninstall (nothing is deleted),
// with the CleanupSkipped Event and metric once. The caller releases the subject.
func (x *Uninstall) Skip(ctx context.Context, reason, msg string) error {
	rec := x.u.rec
	logr.FromContextOrDiscard(ctx).Info("Releasing without deleting anything", "reason", reason, "message", msg)
	rec.skipped(reason, msg, metav1.NewTime(x.u.now))
	rec.recovered()
	if err := x.r.save(ctx, rec); err != nil {
		return inStep("record", err)
	}
	progress.forget(x.key())
	if rec.prev.Phase != cleanupv1alpha1.PhaseSkipped {
		uninstalls.WithLabelValues(x.u.kind, resultSkipped, reason).Inc()
		x.Event(corev1.EventTypeNormal, "CleanupSkipped", "Uninstall", "Nothing deleted (%s): %s", reason, msg)
	}
	return nil
}

// Cascade is how the extension is being deleted, as the record keeps it
// from the deletion's start.
func (x *Uninstall) Cascade() plan.Cascade {
	if ext, ok := x.u.rec.obj.(*cleanupv1alpha1.ExtensionCleanup); ok {
		return plan.Cascade(ext.Status.Cascade)
	}
	return plan.CascadeBackground
}

// Phase is the record's phase as this pass leaves it.
func (x *Uninstall) Phase() string { return string(x.u.rec.st.Phase) }

// FinishExtensionRelease completes the record of a ClusterExtension that
// csv-cleaner released (the record says Releasing) when the attempt that
// released it could not say so (the reply was lost, or the record's write
// failed) and the extension is gone now.
func (r *Reconciler) FinishExtensionRelease(ctx context.Context, name string) error {
	obj := &cleanupv1alpha1.ExtensionCleanup{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if obj.Status.Phase != cleanupv1alpha1.PhaseReleasing {
		return nil
	}
	gone := &metav1.PartialObjectMetadata{}
	gone.SetGroupVersionKind(extensionKind)
	gone.Name, gone.UID = name, obj.Status.ExtensionUID
	deleted := time.Now()
	if obj.Status.StartTime != nil {
		deleted = obj.Status.StartTime.Time
	}
	logr.FromContextOrDiscard(ctx).Info("Completing the uninstall record: the ClusterExtension was released")
	x := &Uninstall{r: r, u: &uninstall{subject: gone, title: "ClusterExtension " + name, deletion: deleted, rec: newRecord(obj), now: time.Now(), kind: KindExtension}}
	x.u.rec.recovered()
	return x.Complete(ctx, "Everything the policy asked for is done; the ClusterExtension is released")
}
