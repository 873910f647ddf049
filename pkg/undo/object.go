package undo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// NoControllerError says why an undo cannot go through an Undo object: no
// csv-cleaner answers one in the cluster, or this identity may not make
// one. Nothing was restored; the undo can be run here instead.
type NoControllerError struct{ Why string }

func (e *NoControllerError) Error() string { return e.Why }

// SpecOf is the Undo spec of what o asks.
func SpecOf(o Options) (cleanupv1alpha1.UndoSpec, error) {
	s := cleanupv1alpha1.UndoSpec{
		Uninstall:       cleanupv1alpha1.UndoTarget{Kind: o.Owner.Kind, Namespace: o.Owner.Namespace, Name: o.Owner.Name},
		BesideOperator:  o.BesideOperator,
		VeleroNamespace: cmp.Or(o.VeleroNamespace, cleanupv1alpha1.DefaultVeleroNamespace),
	}
	if o.Owner.Extension() {
		s.Uninstall.Namespace = ""
	}
	for _, n := range o.Selection.Only {
		s.Only = append(s.Only, n.String())
	}
	if o.Selection.Selector != nil && !o.Selection.Selector.Empty() {
		sel, err := metav1.ParseToLabelSelector(o.Selection.Selector.String())
		if err != nil {
			return s, &SelectionError{fmt.Errorf("--selector: %w", err)}
		}
		s.Selector = sel
	}
	return s, nil
}

// ThroughObject undoes through an Undo object, as `velero restore create
// --wait` does through a Restore: it follows an Undo of the same spec that
// has not ended, or creates one, and follows it until it ends; then it
// returns what the Undo came to, every object's row, as the Undo kept it
// (ReadRows), restoring, linking and reading nothing itself. answer is how long a
// new Undo may go unanswered: a *NoControllerError then (the Undo deleted),
// as when the API is not installed or this identity may not create one.
// An Undo blocked is an *OperatorRunningError (the operator runs) or a
// *BlockedError (Velero cannot restore now), and an Undo this made is
// deleted then: nothing goes on behind the caller's back. No Backup is
// ErrNoBackup, a selection that names nothing a *SelectionError.
func ThroughObject(ctx context.Context, c client.Client, o Options, answer time.Duration) (*Result, string, error) {
	spec, err := SpecOf(o)
	if err != nil {
		return nil, "", err
	}
	u, created, err := undoObject(ctx, c, spec, o.Owner)
	if err != nil {
		return nil, "", err
	}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			_, _ = fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	if created {
		say("Undo %s created: csv-cleaner in the cluster runs it (kubectl get undo %s)", u.Name, u.Name)
	} else {
		say("Undo %s of the same uninstall is under way: following it", u.Name)
	}
	u, err = followObject(ctx, c, u, answer, o.Stalled, say)
	var gone *NoControllerError
	deleted := created && (errors.As(err, &gone) || (err == nil && stopped(u.Status.Phase) && !u.Status.Phase.Ended()))
	if deleted {
		// Nothing goes on behind the caller's back: run again, the undo
		// makes a new Undo, and a new attempt at once.
		if derr := c.Delete(ctx, u); derr != nil && !apierrors.IsNotFound(derr) {
			return nil, u.Name, errors.Join(err, fmt.Errorf("deleting Undo %s: %w", u.Name, derr))
		}
	}
	if err != nil {
		return nil, u.Name, err
	}
	cond := meta.FindStatusCondition(u.Status.Conditions, cleanupv1alpha1.UndoConditionComplete)
	if blocked := blockedObject(ctx, c, u, cond, deleted); blocked != nil {
		return nil, u.Name, blocked
	}
	switch {
	case u.Status.Phase == cleanupv1alpha1.UndoFailed && cond != nil && cond.Reason == cleanupv1alpha1.UndoReasonInvalidSelection:
		return nil, u.Name, &SelectionError{errors.New(cond.Message)}
	case u.Status.Phase == cleanupv1alpha1.UndoFailed:
		return nil, u.Name, fmt.Errorf("%w: %s", ErrNoBackup, strings.TrimPrefix(cond.Message, ErrNoBackup.Error()+" "))
	}
	switch kept, err := ReadRows(ctx, c, u); {
	case err != nil:
		return nil, u.Name, err
	case kept != nil:
		return &Result{Outcome: *kept}, u.Name, nil
	}
	// An Undo that kept no rows (run by an older csv-cleaner, or more rows
	// than a ConfigMap holds): where everything stands is read from here,
	// writing nothing.
	o.Restore, o.ReportOnly = u.Status.Restore, true
	res, err := Step(ctx, c, o)
	return res, u.Name, err
}

// blockedObject is the error of an Undo that is blocked (cond its Complete
// condition): an *OperatorRunningError, or a *BlockedError saying why and
// what to do; nil when it is not blocked. deleted: the Undo was this
// command's, and is deleted.
func blockedObject(ctx context.Context, c client.Client, u *cleanupv1alpha1.Undo, cond *metav1.Condition, deleted bool) error {
	switch {
	case u.Status.Phase == cleanupv1alpha1.UndoWaitingForReinstall:
		return &BlockedError{Reason: cleanupv1alpha1.UndoReasonWaitingForReinstall, Message: fmt.Sprintf("Undo %s waits for the operator to be installed again, as the older csv-cleaner that runs it does: %s", u.Name, u.Status.Reinstall)}
	case u.Status.Phase != cleanupv1alpha1.UndoBlocked || cond == nil:
		return nil
	case cond.Reason == cleanupv1alpha1.UndoReasonOperatorRunning:
		return &OperatorRunningError{Message: cond.Message}
	case !deleted:
		return &BlockedError{Reason: cond.Reason, Message: fmt.Sprintf("Undo %s: %s (it goes on by itself: kubectl get undo %s, or run the undo again to follow it)", u.Name, cond.Message, u.Name)}
	}
	msg := cond.Message
	if namespace, _, _ := strings.Cut(u.Status.Backup, "/"); cond.Reason == cleanupv1alpha1.UndoReasonRestoreFailed && u.Status.Restore != "" {
		// What the Undo would have done next is moot: say what a person does.
		r, err := velero.Client{Live: c, Namespace: namespace}.Restore(ctx, u.Status.Restore)
		if err != nil {
			return err
		}
		if r != nil {
			msg = RestoreFailedMessage(namespace, r, time.Time{})
		}
	}
	return &BlockedError{Reason: cond.Reason, Message: msg}
}

// undoObject is an Undo of spec that has not ended, or one just created.
func undoObject(ctx context.Context, c client.Client, spec cleanupv1alpha1.UndoSpec, owner decide.Owner) (*cleanupv1alpha1.Undo, bool, error) {
	list := &cleanupv1alpha1.UndoList{}
	switch err := c.List(ctx, list); {
	case meta.IsNoMatchError(err):
		return nil, false, &NoControllerError{"the cluster does not serve Undos (csv-cleaner is not installed there)"}
	case apierrors.IsForbidden(err):
		return nil, false, &NoControllerError{"this identity may not list Undos"}
	case err != nil:
		return nil, false, fmt.Errorf("listing Undos: %w", err)
	}
	for i := range list.Items {
		u := &list.Items[i]
		if !u.Status.Phase.Ended() && u.DeletionTimestamp.IsZero() && sameSpec(u.Spec, spec) {
			return u, false, nil
		}
	}
	u := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{GenerateName: objectPrefix(owner)}, Spec: spec}
	switch err := c.Create(ctx, u); {
	case apierrors.IsForbidden(err):
		return nil, false, &NoControllerError{"this identity may not create Undos"}
	case err != nil:
		return nil, false, fmt.Errorf("creating an Undo of the uninstall of %s: %w", owner, err)
	}
	return u, true, nil
}

// sameSpec reports whether two Undos ask the same: the same uninstall,
// Velero namespace and besideOperator, the same --only names in any order,
// and selectors that select the same (an empty one as none: the API server
// returns a selector's empty lists as absent). withoutOperator is ignored,
// as the undo ignores it.
func sameSpec(a, b cleanupv1alpha1.UndoSpec) bool {
	return a.Uninstall == b.Uninstall && a.BesideOperator == b.BesideOperator &&
		cmp.Or(a.VeleroNamespace, cleanupv1alpha1.DefaultVeleroNamespace) == cmp.Or(b.VeleroNamespace, cleanupv1alpha1.DefaultVeleroNamespace) &&
		sameSet(a.Only, b.Only) && selects(a.Selector) == selects(b.Selector)
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// selects is what a label selector selects, in the canonical form labels
// print it in ("" for none, or an empty one).
func selects(s *metav1.LabelSelector) string {
	if s == nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "invalid: " + s.String()
	}
	return sel.String()
}

// stopped reports whether a follower of an Undo in phase p stops: it ended,
// or it cannot go on now.
func stopped(p cleanupv1alpha1.UndoPhase) bool {
	return p.Ended() || p == cleanupv1alpha1.UndoBlocked || p == cleanupv1alpha1.UndoWaitingForReinstall
}

// objectPrefix is the generateName of an Undo of owner's uninstall.
func objectPrefix(owner decide.Owner) string {
	p := strings.ToLower(owner.Name)
	if len(p) > 200 {
		p = p[:200]
	}
	return strings.TrimRight(p, ".-") + "-"
}

// followObject reads u until it ends or is blocked, saying what changes;
// a new Undo that nobody answers in answer is a *NoControllerError.
func followObject(ctx context.Context, c client.Client, u *cleanupv1alpha1.Undo, answer, stalled time.Duration, say func(string, ...any)) (*cleanupv1alpha1.Undo, error) {
	began, first := time.Now(), true
	err := followUntil(ctx, 0, stalled, func(line string) { say("%s", line) }, func(err error) error {
		return fmt.Errorf("following Undo %s: %w (it goes on in the cluster: kubectl get undo %s, or run the undo again to follow it)", u.Name, err, u.Name)
	}, func(ctx context.Context) (sighting, error) {
		if !first { // u was read when the follow began
			fresh := &cleanupv1alpha1.Undo{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), fresh); err != nil {
				return sighting{}, fmt.Errorf("reading Undo %s: %w", u.Name, err)
			}
			u = fresh
		}
		first = false
		if u.Status.ObservedGeneration == 0 {
			if time.Since(began) > answer {
				return sighting{}, &NoControllerError{fmt.Sprintf("no csv-cleaner in the cluster answered Undo %s in %s (it is scaled to zero, or too old to run Undos)", u.Name, answer)}
			}
			return sighting{}, nil
		}
		seen := u
		return sighting{line: report.UndoLine(seen), ended: stopped(seen.Status.Phase), stalled: func(since time.Duration) string { return undoStalled(seen, since) }}, nil
	})
	return u, err
}

// undoStalled says an Undo has not moved for since: its Restore's progress
// while it has one.
func undoStalled(u *cleanupv1alpha1.Undo, since time.Duration) string {
	st := u.Status
	if st.Restore == "" {
		return report.UndoStalled(u, since)
	}
	namespace, _, _ := strings.Cut(st.Backup, "/")
	return fmt.Sprintf("Undo %s: %s", u.Name, report.RestoreStalled(namespace, st.Restore, &velero.Restore{Phase: st.RestorePhase, Restored: st.ItemsRestored, Total: st.TotalItems}, since))
}
