package undo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
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
		WithoutOperator: o.WithoutOperator,
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
// reports every object as Step does, writing nothing. answer is how long a
// new Undo may go unanswered: a *NoControllerError then (the Undo deleted),
// as when the API is not installed or this identity may not create one.
// An operator not installed again is a *NotReinstalledError (an Undo this
// made is deleted: nothing stays behind), no Backup ErrNoBackup, a
// selection that names nothing a *SelectionError.
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
	if created && (errors.As(err, &gone) || (err == nil && u.Status.Phase == cleanupv1alpha1.UndoWaitingForReinstall)) {
		if derr := c.Delete(ctx, u); derr != nil && !apierrors.IsNotFound(derr) {
			return nil, u.Name, errors.Join(err, fmt.Errorf("deleting Undo %s: %w", u.Name, derr))
		}
	}
	if err != nil {
		return nil, u.Name, err
	}
	cond := meta.FindStatusCondition(u.Status.Conditions, cleanupv1alpha1.UndoConditionComplete)
	switch {
	case u.Status.Phase == cleanupv1alpha1.UndoWaitingForReinstall:
		return nil, u.Name, &NotReinstalledError{Message: u.Status.Reinstall}
	case u.Status.Phase == cleanupv1alpha1.UndoFailed && cond != nil && cond.Reason == cleanupv1alpha1.UndoReasonInvalidSelection:
		return nil, u.Name, &SelectionError{errors.New(cond.Message)}
	case u.Status.Phase == cleanupv1alpha1.UndoFailed:
		return nil, u.Name, fmt.Errorf("%w: %s", ErrNoBackup, strings.TrimPrefix(cond.Message, ErrNoBackup.Error()+" "))
	}
	o.Restore, o.ReportOnly = u.Status.Restore, true
	res, err := Step(ctx, c, o)
	return res, u.Name, err
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
		if !u.Status.Phase.Ended() && u.DeletionTimestamp.IsZero() && reflect.DeepEqual(u.Spec, spec) {
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

// objectPrefix is the generateName of an Undo of owner's uninstall.
func objectPrefix(owner decide.Owner) string {
	p := strings.ToLower(owner.Name)
	if len(p) > 200 {
		p = p[:200]
	}
	return strings.TrimRight(p, ".-") + "-"
}

// followObject reads u until it ends or waits for a reinstall, saying what
// changes; a new Undo that nobody answers in answer is a *NoControllerError.
func followObject(ctx context.Context, c client.Client, u *cleanupv1alpha1.Undo, answer, stalled time.Duration, say func(string, ...any)) (*cleanupv1alpha1.Undo, error) {
	began := time.Now()
	stalled = cmp.Or(stalled, time.Minute)
	last, moved, said := "", began, began
	for {
		if u.Status.ObservedGeneration == 0 && time.Since(began) > answer {
			return u, &NoControllerError{fmt.Sprintf("no csv-cleaner in the cluster answered Undo %s in %s (it is scaled to zero, or too old to run Undos)", u.Name, answer)}
		}
		if st := u.Status; st.ObservedGeneration > 0 {
			line := report.UndoLine(u)
			now := time.Now()
			switch {
			case line != last:
				say("%s", line)
				moved, said = now, now
			case now.Sub(said) >= stalled && st.Restore != "":
				namespace, _, _ := strings.Cut(st.Backup, "/")
				say("Undo %s: %s", u.Name, report.RestoreStalled(namespace, st.Restore, &velero.Restore{Phase: st.RestorePhase, Restored: st.ItemsRestored, Total: st.TotalItems}, now.Sub(moved)))
				said = now
			case now.Sub(said) >= stalled:
				say("%s", report.UndoStalled(u, now.Sub(moved)))
				said = now
			}
			last = line
			if st.Phase.Ended() || st.Phase == cleanupv1alpha1.UndoWaitingForReinstall {
				return u, nil
			}
		}
		select {
		case <-ctx.Done():
			return u, fmt.Errorf("following Undo %s: %w (it goes on in the cluster: kubectl get undo %s, or run the undo again to follow it)", u.Name, ctx.Err(), u.Name)
		case <-time.After(min(max(time.Since(began)/50, 200*time.Millisecond), time.Second)):
		}
		fresh := &cleanupv1alpha1.Undo{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), fresh); err != nil {
			return u, fmt.Errorf("reading Undo %s: %w", u.Name, err)
		}
		u = fresh
	}
}
