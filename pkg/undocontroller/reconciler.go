package undocontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// How often an undo is looked at again while it waits: blocked (for the
// operator to stop, for Velero's storage location), and for Velero's
// Restore.
const (
	blockedPoll = 10 * time.Second
	restorePoll = 2 * time.Second
)

// Reconciler runs Undos.
type Reconciler struct {
	// Client reads Undos from the cache and writes their status.
	Client client.Client
	// Live is what the undo reads and writes through (pkg/undo).
	Live     client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=undos,verbs=get;list;watch
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=undos/status,verbs=get;update;patch

// Reconcile is the skeleton: fetch; an Undo that ended (or is being
// deleted) is left alone; while its Restore is under way, only the Restore
// is read; else one step of the undo, judged, into its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &cleanupv1alpha1.Undo{}
	if err := r.Client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !u.DeletionTimestamp.IsZero() || (u.Status.Phase.Ended() && u.Status.ObservedGeneration == u.Generation) {
		return ctrl.Result{}, nil
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("undo", klog.KObj(u), "uninstall", target(u))
	ctx = logr.NewContext(ctx, log)
	before := u.DeepCopy()
	if u.Status.StartTime == nil {
		now := metav1.Now()
		u.Status.StartTime = &now
	}
	u.Status.ObservedGeneration = u.Generation
	if waiting, err := r.followRestore(ctx, u); err != nil || waiting {
		return r.settle(ctx, before, u, restorePoll, err)
	}
	if gone, err := r.deleted(ctx, u); err != nil || gone {
		return ctrl.Result{}, err
	}
	o, err := optionsOf(u)
	var res *undo.Result
	if err == nil {
		log.V(1).Info("Taking the undo one step on", "restore", u.Status.Restore)
		res, err = undo.Step(ctx, r.Live, o)
	}
	step, retryAt, err := stepOf(res, err)
	if err != nil {
		return r.settle(ctx, before, u, 0, err)
	}
	verdict := undoplan.JudgeUndo(step)
	u.Status.Rows = ""
	if verdict.Phase.Ended() && res != nil {
		// The rows are kept before the status says the undo ended: what
		// follows the Undo prints them once it reads it ended.
		if u.Status.Rows, err = r.keepRows(ctx, u, res); err != nil {
			return r.settle(ctx, before, u, 0, err)
		}
	}
	record(u, res, verdict)
	poll := time.Duration(0)
	switch verdict.Phase {
	case cleanupv1alpha1.UndoBlocked:
		poll = blockedPoll
		if !retryAt.IsZero() {
			poll = max(time.Until(retryAt), time.Second)
		}
	case cleanupv1alpha1.UndoInProgress:
		poll = restorePoll
	}
	return r.settle(ctx, before, u, poll, nil)
}

// keepRows keeps what the undo came to in its rows ConfigMap (undo.KeepRows)
// and returns its namespace/name; "" when there is no Backup to keep them
// beside, or when they do not fit a ConfigMap or csv-cleaner may not write
// one there (said in the log and an Event: the command then reads them
// itself; a report is never what holds an undo that is done).
func (r *Reconciler) keepRows(ctx context.Context, u *cleanupv1alpha1.Undo, res *undo.Result) (string, error) {
	if res.Backup == "" {
		return "", nil
	}
	name, err := undo.KeepRows(ctx, r.Live, u, &res.Outcome)
	if errors.Is(err, undo.ErrRowsTooLarge) || apierrors.IsForbidden(err) {
		logr.FromContextOrDiscard(ctx).Info("Not keeping the undo's rows: csv-cleaner undo reads them itself", "why", err.Error())
		r.Recorder.Eventf(u, nil, corev1.EventTypeWarning, "RowsNotKept", "Undo",
			"%s: csv-cleaner undo reads where each object stands itself (manifests/velero/role.yaml lets csv-cleaner write ConfigMaps in Velero's namespace)", err.Error())
		return "", nil
	}
	return name, err
}

// deleted reads the Undo live before a step that may make a Restore: the
// cache may still hold an Undo its maker has deleted (the CLI deletes the
// Undo it made when it is blocked, and may then make Velero's storage
// Available again), and no Restore is made for an Undo nobody follows.
func (r *Reconciler) deleted(ctx context.Context, u *cleanupv1alpha1.Undo) (bool, error) {
	live := &cleanupv1alpha1.Undo{}
	err := r.Live.Get(ctx, client.ObjectKeyFromObject(u), live)
	switch {
	case apierrors.IsNotFound(err):
		logr.FromContextOrDiscard(ctx).V(1).Info("Not taking the undo on: it was deleted")
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading Undo %s: %w", u.Name, err)
	}
	return !live.DeletionTimestamp.IsZero() || live.UID != u.UID, nil
}

// followRestore reads the Restore of an undo under way: waiting while it
// has not ended (its progress recorded), so that a reconcile reads one
// object while Velero works rather than everything the undo restores.
func (r *Reconciler) followRestore(ctx context.Context, u *cleanupv1alpha1.Undo) (waiting bool, _ error) {
	if u.Status.Phase != cleanupv1alpha1.UndoInProgress || u.Status.Restore == "" {
		return false, nil
	}
	namespace, _, _ := strings.Cut(u.Status.Backup, "/")
	v := velero.Client{Live: r.Live, Writer: r.Live, Namespace: namespace}
	restore, err := v.Restore(ctx, u.Status.Restore)
	if err != nil || restore == nil || restore.Ended() {
		return false, err
	}
	u.Status.RestorePhase, u.Status.ItemsRestored, u.Status.TotalItems = restore.Phase, restore.Restored, restore.Total
	return true, nil
}

// settle writes the status when it changed, with an Event when the phase
// did, and says when to look again: after poll, or, on err, after the
// controller's backoff with the error in the Complete condition.
func (r *Reconciler) settle(ctx context.Context, before, u *cleanupv1alpha1.Undo, poll time.Duration, err error) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	if err != nil {
		meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: cleanupv1alpha1.UndoConditionComplete, Status: metav1.ConditionFalse,
			Reason: cleanupv1alpha1.UndoReasonRetrying, Message: "tried again with a growing delay after: " + err.Error(), ObservedGeneration: u.Generation})
	}
	if !equality.Semantic.DeepEqual(before.Status, u.Status) {
		if werr := r.Client.Status().Patch(ctx, u, client.MergeFrom(before)); werr != nil {
			return ctrl.Result{}, errors.Join(err, fmt.Errorf("writing the status of Undo %s: %w", u.Name, werr))
		}
		if u.Status.Phase != before.Status.Phase && u.Status.Phase != "" {
			c := meta.FindStatusCondition(u.Status.Conditions, cleanupv1alpha1.UndoConditionComplete)
			kind := corev1.EventTypeNormal
			if u.Status.Phase == cleanupv1alpha1.UndoFailed || u.Status.Phase == cleanupv1alpha1.UndoPartiallyFailed {
				kind = corev1.EventTypeWarning
			}
			log.Info("The undo moved on", "phase", u.Status.Phase, "restore", u.Status.Restore, "message", c.Message)
			r.Recorder.Eventf(u, nil, kind, "Undo"+string(u.Status.Phase), "Undo", "%s", c.Message)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: poll}, nil
}

// target names the uninstall an Undo undoes, for a log line.
func target(u *cleanupv1alpha1.Undo) string {
	t := u.Spec.Uninstall
	if t.Namespace == "" {
		return t.Kind + " " + t.Name
	}
	return t.Kind + " " + t.Namespace + "/" + t.Name
}

// stepOf is what a step found, in pkg/decide's terms, and when a failed
// Restore is tried again (zero: not known); err only when the step failed
// in a way that is tried again (the API server, Velero).
func stepOf(res *undo.Result, err error) (undoplan.UndoStep, time.Time, error) {
	var s undoplan.UndoStep
	running, blocked, selection := (*undo.OperatorRunningError)(nil), (*undo.BlockedError)(nil), (*undo.SelectionError)(nil)
	var retryAt time.Time
	switch {
	case errors.Is(err, undo.ErrNoBackup):
		s.NoBackup = err.Error()
	case errors.As(err, &selection):
		s.InvalidSelection = err.Error()
	case errors.As(err, &running):
		s.OperatorRunning = err.Error()
	case errors.As(err, &blocked):
		s.Blocked, s.BlockedReason, retryAt = blocked.Message, blocked.Reason, blocked.RetryAt
	case apierrors.IsForbidden(err):
		// What csv-cleaner may not read or write does not change by itself
		// soon; it is said, and tried again with the backoff.
		return s, retryAt, fmt.Errorf("%w (the undo's rights come with manifests/velero: docs/backup.md, \"Rights\")", err)
	case err != nil:
		return s, retryAt, err
	}
	if res != nil {
		s.UnderWay, s.Binding, s.Objects, s.NotBack = res.UnderWay, res.Binding, len(res.Rows), res.Missing()
	}
	return s, retryAt, nil
}
