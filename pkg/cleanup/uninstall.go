package cleanup

import (
	"cmp"
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
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
)

// Uninstall is one pass of an owner's uninstall, with its record open: what
// it holds was read in this pass, and only the record carries anything to the
// next (docs/architecture.md says when it is written).
type Uninstall struct {
	e     *Engine
	owner Hooks
	kind  RecordKind
	// subject is the owner's object: the Events regard it.
	subject client.Object
	title   string
	// deletion is its deletionTimestamp.
	deletion time.Time
	settings decide.Settings
	rec      *record
	now      time.Time
	// scopes are the CRDs whose instances the uninstall deals with.
	scopes []decide.CRDScope
	// waitNote, when set, says what a step that is not done waits for;
	// poll, when set, is how soon the pass looks again (the backup gate).
	waitNote string
	poll     time.Duration
}

// Open opens the record of the owner's uninstall (created when it does not
// exist, started afresh when it belongs to an earlier owner of the same
// name) for one pass under settings. createFirst creates the record before
// reading it, for a deletion just seen.
func (e *Engine) Open(ctx context.Context, owner Hooks, settings decide.Settings, now time.Time, createFirst bool) (*Uninstall, error) {
	obj := owner.Object()
	rec, err := e.openRecord(ctx, owner.Record(), obj, createFirst)
	if err != nil {
		return nil, InStep("record", err)
	}
	deletion := now
	if t := obj.GetDeletionTimestamp(); t != nil {
		deletion = t.Time
	}
	return &Uninstall{e: e, owner: owner, kind: owner.Record(), subject: obj, title: owner.Record().owner(obj).String(),
		deletion: deletion, settings: settings, rec: rec, now: now}, nil
}

// key is the record's key, for the progress metrics.
func (u *Uninstall) key() types.NamespacedName { return client.ObjectKeyFromObject(u.subject) }

// observe shows the record, as this pass leaves it, in the progress metrics.
func (u *Uninstall) observe() { progress.observe(u.key(), u.rec.st) }

// Start is what an uninstall says before it deletes anything.
type Start struct {
	// Policy is the CleanupPolicy's name.
	Policy string
	// Why is what the deletion is (decide.Verdict's message).
	Why string
	// About says, for a person, what the uninstall is about to do.
	About string
	// Warning, when not empty, goes into the record's message and a Warning
	// Event of reason WarnReason, once.
	WarnReason, Warning string
	// UninstallMessage is the operator author's words to whoever uninstalls
	// it; the record keeps them.
	UninstallMessage string
}

// Start writes the record at Deleting, with what the uninstall is about to
// do, once and before anything is deleted, and sends CleanupStarted. Two
// workers starting one record (a CSV's acknowledgement and its uninstall)
// take turns, so that neither fails nor sends the Event twice.
func (u *Uninstall) Start(ctx context.Context, s Start) error {
	log := logr.FromContextOrDiscard(ctx)
	uid := u.subject.GetUID()
	if u.rec.st.StartTime != nil && u.rec.st.Policy == s.Policy { // the usual case: started in an earlier pass
		if u.e.starts.confirm(uid) {
			u.sendStarted(s)
		}
		return nil
	}
	turn := u.e.starts.take(uid)
	defer turn.Unlock()
	if turn.started && u.rec.st.StartTime == nil {
		if err := u.reopen(ctx); err != nil { // read before the other's write
			return err
		}
	}
	for range 3 {
		if !u.rec.start(s.Policy, metav1.NewTime(u.now)) {
			return nil
		}
		log.Info("Starting the uninstall", "policy", s.Policy, "reason", s.Why, "plan", s.About)
		msg := "Uninstall started: " + s.About
		if s.Warning != "" {
			msg = s.Warning + "; " + msg
		}
		u.rec.deleting(msg)
		u.rec.st.UninstallMessage = s.UninstallMessage
		err := u.e.save(ctx, u.rec)
		if err == nil {
			turn.started = true
			u.sendStarted(s)
			return nil
		}
		// Nothing was done yet that the record must keep: the start is
		// written again, with its Event, by whoever comes next.
		u.e.pending.drop(uid)
		if !apierrors.IsConflict(err) {
			turn.unsure = true // the write may have happened: see confirm
			return InStep("record", err)
		}
		log.V(1).Info("Reading the uninstall record again: it was written meanwhile")
		if err := u.reopen(ctx); err != nil {
			return err
		}
	}
	return InStep("record", fmt.Errorf("starting the uninstall record of %s: it kept changing", u.title))
}

// reopen reads the record again.
func (u *Uninstall) reopen(ctx context.Context) error {
	rec, err := u.e.openRecord(ctx, u.kind, u.subject, false)
	if err != nil {
		return InStep("record", err)
	}
	u.rec = rec
	return nil
}

// sendStarted sends CleanupStarted (and the warning), once the record's start is written.
func (u *Uninstall) sendStarted(s Start) {
	u.Event(corev1.EventTypeNormal, "CleanupStarted", "Uninstall", "Uninstall started under CleanupPolicy %s: %s; %s", s.Policy, s.Why, s.About)
	if s.Warning != "" {
		u.Event(corev1.EventTypeWarning, s.WarnReason, "Uninstall", "%s", s.Warning)
	}
}

// Step is one idempotent step of an uninstall. done is false while it
// waits on the cluster; a *decide.Problem error (or a refusal) blocks the
// uninstall until it is fixed; another error fails the attempt.
type Step struct {
	// Name names the step in the record's messages.
	Name string
	// Label names it in csv_cleaner_failed_attempts_total ("" is Name).
	Label string
	Run   func(context.Context) (done bool, err error)
}

// Run runs the steps in order, stops at the first that is not done and
// writes the record once with what they came to (a block, a wait, a failed
// attempt). proceed is true only when every step is done; else res and err
// are the reconcile's.
func (u *Uninstall) Run(ctx context.Context, steps ...Step) (proceed bool, res ctrl.Result, _ error) {
	rec, log := u.rec, logr.FromContextOrDiscard(ctx)
	rec.keptOn = true
	defer u.observe()
	for _, s := range steps {
		done, err := s.Run(ctx)
		var problem *decide.Problem
		if why, ok := refusal.Classify(err); ok && !errors.As(err, &problem) {
			// A request of this step that the API server refuses is never silent.
			err = &decide.Problem{Reason: why.Reason, Object: "step " + s.Name, Message: err.Error() + "; " + why.Advice()}
		}
		switch {
		case errors.As(err, &problem):
			log.Info("Uninstall is blocked", "step", s.Name, "reason", problem.Reason, "object", problem.Object, "message", problem.Message)
			rec.blocked(problem.Reason, problem.Message)
			if rec.prev.Phase != cleanupv1alpha1.PhaseBlocked || rec.prev.Reason != problem.Reason {
				uninstalls.WithLabelValues(u.kind.Kind, resultBlocked, problem.Reason).Inc()
				u.Event(corev1.EventTypeWarning, "Blocked", "Uninstall", "Uninstall blocked (%s) on %s: %s", problem.Reason, problem.Object, problem.Message)
			}
			rec.recovered()
			return false, ctrl.Result{RequeueAfter: u.requeueAfter()}, InStep("record", u.e.save(ctx, rec))
		case err != nil:
			return false, ctrl.Result{}, errors.Join(InStep(cmp.Or(s.Label, s.Name), err), u.e.save(ctx, rec))
		case !done:
			log.V(1).Info("Waiting", "step", s.Name, "remaining", rec.st.Remaining)
			rec.deleting(cmp.Or(u.waitNote, fmt.Sprintf("Waiting for %s: %d objects remaining", s.Name, rec.st.Remaining)))
			rec.recovered()
			return false, ctrl.Result{RequeueAfter: u.requeueAfter()}, InStep("record", u.e.save(ctx, rec))
		}
	}
	return true, ctrl.Result{}, nil
}

// Release ends an uninstall whose steps are all done: the record says
// Releasing, the owner is released, then the record says Completed, with
// CleanupCompleted and the metrics once (docs/architecture.md says why in
// that order).
func (u *Uninstall) Release(ctx context.Context, releasing, completed string) error {
	rec := u.rec
	if err := rec.finished(); err != nil {
		return errors.Join(InStep("release", err), u.e.save(ctx, rec))
	}
	rec.releasing(releasing)
	rec.recovered()
	if err := u.e.save(ctx, rec); err != nil {
		return InStep("record", err)
	}
	logr.FromContextOrDiscard(ctx).Info("Releasing the " + u.kind.Subject.Kind + ": the uninstall is complete")
	if err := u.owner.Release(ctx); err != nil {
		return InStep("release", err)
	}
	return InStep("record", u.complete(ctx, completed))
}

// complete writes Completed into the record of a released owner, and the
// Event and metrics once.
func (u *Uninstall) complete(ctx context.Context, msg string) error {
	rec := u.rec
	done := time.Now()
	rec.completed(metav1.NewTime(done), msg+u.undoNote(rec.st))
	if err := u.e.save(ctx, rec); err != nil {
		return err
	}
	u.observe()
	u.e.forget(u.subject.GetUID())
	if rec.prev.Phase != cleanupv1alpha1.PhaseCompleted {
		took := done.Sub(u.deletion)
		uninstalls.WithLabelValues(u.kind.Kind, resultCompleted, "").Inc()
		uninstallDuration.WithLabelValues(u.kind.Kind).Observe(took.Seconds())
		u.Event(corev1.EventTypeNormal, "CleanupCompleted", "Uninstall", "Uninstall completed in %s%s", took.Round(time.Second), u.undoNote(rec.st))
	}
	return nil
}

// Skip records a deletion that is not an uninstall and releases the owner
// at once: csv-cleaner never holds up an upgrade, a reinstall or OLM's
// copies. Nothing is deleted; CleanupSkipped and its metric come once.
func (u *Uninstall) Skip(ctx context.Context, reason, msg string) error {
	rec := u.rec
	logr.FromContextOrDiscard(ctx).Info("Releasing without deleting anything", "reason", reason, "message", msg)
	rec.skipped(reason, msg, metav1.NewTime(u.now))
	rec.recovered()
	if err := u.e.save(ctx, rec); err != nil {
		return InStep("record", err)
	}
	if err := u.owner.Release(ctx); err != nil {
		return InStep("release", err)
	}
	u.observe()
	u.e.forget(u.subject.GetUID())
	if rec.prev.Phase != cleanupv1alpha1.PhaseSkipped {
		uninstalls.WithLabelValues(u.kind.Kind, resultSkipped, reason).Inc()
		u.Event(corev1.EventTypeNormal, "CleanupSkipped", "Uninstall", "Nothing deleted (%s): %s", reason, msg)
	}
	return nil
}

// forget drops what this process held for an uninstall that ended.
func (e *Engine) forget(uid types.UID) {
	e.starts.forget(uid)
	e.revisions.Forget(uid)
	e.backups.Forget(uid)
}

// FinishRelease completes the record of an owner that csv-cleaner released
// (the record says Releasing) when the attempt that released it could not
// say so: the reply was lost, or the record's write failed. owner is the
// owner still being deleted by others' finalizers, or nil once it is gone;
// a record of another owner of the same name is left alone.
func (e *Engine) FinishRelease(ctx context.Context, kind RecordKind, key types.NamespacedName, owner client.Object) error {
	if owner == nil {
		progress.forget(key)
	}
	obj := kind.empty()
	if err := e.APIReader.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	rec := newRecord(obj)
	if rec.st.Phase != cleanupv1alpha1.PhaseReleasing || owner != nil && owner.GetUID() != rec.uid {
		return nil
	}
	deleted := time.Now()
	if rec.st.StartTime != nil {
		deleted = rec.st.StartTime.Time
	}
	if owner == nil {
		gone := kind.subject()
		gone.Namespace, gone.Name, gone.UID = key.Namespace, key.Name, rec.uid
		owner = gone
	} else if t := owner.GetDeletionTimestamp(); t != nil {
		deleted = t.Time
	}
	logr.FromContextOrDiscard(ctx).Info("Completing the uninstall record: the "+kind.Subject.Kind+" was released", "owner", key)
	rec.recovered()
	u := &Uninstall{e: e, kind: kind, subject: owner, deletion: deleted, rec: rec, now: time.Now()}
	return InStep("record", u.complete(ctx, "Everything the policy asked for is done; the "+kind.Subject.Kind+" is released"))
}

// Scopes sets the CRDs whose instances the uninstall deals with.
func (u *Uninstall) Scopes(scopes []decide.CRDScope) { u.scopes = scopes }

// CRDScopes are the CRDs whose instances the uninstall deals with.
func (u *Uninstall) CRDScopes() []decide.CRDScope { return u.scopes }

// KindsGone counts, of the kinds the record counts instances of, those
// whose CRD no longer exists (crdKinds are the kinds of every CRD there
// is): none of their instances is left, whatever an earlier pass saw.
func (u *Uninstall) KindsGone(crdKinds map[string]bool) {
	for _, c := range slices.Clone(u.rec.st.Counts) {
		if c.Kind != decide.CRDKind && !crdKinds[c.Kind] {
			u.rec.count(c.Kind, 0, 0, map[string]int{cleanupv1alpha1.NoteCRDNotFound: 0})
		}
	}
}

// DeleteInstances deletes the instances of the scopes' CRDs in targets as
// decide.PlanOperands decides, and reports whether none is left (see
// deleteInstances).
func (u *Uninstall) DeleteInstances(ctx context.Context, targets decide.NamespaceSet) (bool, error) {
	return u.e.deleteInstances(ctx, u, targets)
}

// KeepInstances counts every instance of the scopes' CRDs as kept for
// reason (decide.GateOperands' orphan, operands: Orphan).
func (u *Uninstall) KeepInstances(ctx context.Context, reason string) error {
	return u.e.countKept(ctx, u, reason)
}

// InstancesLeft reports whether a CRD has any instance left.
func (u *Uninstall) InstancesLeft(ctx context.Context, s *decide.CRDScope) (bool, error) {
	return u.e.gather().InstancesLeft(ctx, s)
}

// Count records what a step found of one kind (see record.count).
func (u *Uninstall) Count(kind string, found, remaining int, kept map[string]int) {
	u.rec.count(kind, found, remaining, kept)
}

// Keep names objects the step keeps.
func (u *Uninstall) Keep(refs ...cleanupv1alpha1.ObjectRef) { u.rec.keep(refs...) }

// SetBlocking names the objects the uninstall waits on.
func (u *Uninstall) SetBlocking(refs []cleanupv1alpha1.ObjectRef) { u.rec.setBlocking(refs) }

// Settings are the policy's settings the uninstall runs under.
func (u *Uninstall) Settings() decide.Settings { return u.settings }

// Event sends an Event on the owner.
func (u *Uninstall) Event(eventType, reason, action, note string, args ...any) {
	u.e.Event(u.subject, eventType, reason, action, note, args...)
}

// RecordObject is the record (a CSVCleanup or an ExtensionCleanup) as this
// pass writes it: an owner's side sets in it what only its kind of record
// holds, and the pass writes it with the rest.
func (u *Uninstall) RecordObject() client.Object { return u.rec.obj }

// Phase is the record's phase as this pass leaves it.
func (u *Uninstall) Phase() string { return string(u.rec.st.Phase) }

// timeout says whether the uninstall's operandTimeout has passed, as of this pass.
func (u *Uninstall) timeout() decide.Timeout {
	return decide.TimeoutOf(u.settings, u.deletion, u.now)
}

// operatorUnavailable says why the owner's operator is unavailable, nil while it runs.
func (u *Uninstall) operatorUnavailable(ctx context.Context) (*decide.Problem, error) {
	return u.owner.OperatorUnavailable(ctx)
}

// requeueAfter backs off with the uninstall's age — soon at first, at most
// every 30 s — and wakes up when the operand timeout falls due.
func (u *Uninstall) requeueAfter() time.Duration {
	elapsed := u.now.Sub(u.deletion)
	d := min(max(elapsed/4, 500*time.Millisecond), 30*time.Second)
	if untilTimeout := u.settings.OperandTimeout - elapsed; untilTimeout > 0 {
		d = min(d, untilTimeout+100*time.Millisecond)
	}
	if u.poll > 0 {
		d = min(d, u.poll)
	}
	return d
}
