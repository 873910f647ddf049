package undo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// Options are what an undo is asked to do.
type Options struct {
	Owner decide.Owner
	// VeleroNamespace is where to look for the Backups when the record is gone.
	VeleroNamespace string
	// BesideOperator makes the Restore while the operator that serves the
	// uninstall's CRDs runs; else that is an *OperatorRunningError.
	BesideOperator bool
	// Selection narrows the undo to some custom resources and what they
	// owned (undoplan.Select); empty, everything.
	Selection undoplan.UndoSelection
	// Progress, when set, receives a line each time the Restore moves on.
	Progress io.Writer
	// Poll, when set, is how often the Restore is read; else a fiftieth of
	// its age so far, between 100 ms and 1 s (about 2 % added to its time).
	Poll time.Duration
	// Stalled, when set, is how long a Restore that does not move goes
	// before Progress says so (again each time as long); else a minute.
	Stalled time.Duration
	// Restore is the Restore an earlier step made or followed: a step
	// follows it while it is under way, and makes no other once it ended,
	// unless it failed: a *BlockedError then, or, with Retry, the next
	// attempt once undoplan.RetryAt has come and the location is Available.
	Restore string
	// Retry makes the next attempt after Restore failed by itself (the Undo
	// controller); without it a person runs the undo again.
	Retry bool
	// ReportOnly reports where everything stands and writes nothing: no
	// Restore, no owners (how `csv-cleaner undo` reads an Undo's end).
	ReportOnly bool
}

// Result is what an undo did (undoplan.Outcome, what is kept and printed of it), and
// how far its Restore is.
type Result struct {
	undoplan.Outcome
	// UnderWay: the Restore has not ended, or Binding of the claims it
	// restored are still being made from their snapshots (undoplan.Binding,
	// up to undoplan.ClaimBindWait after it ended); Step again.
	UnderWay bool
	Binding  int
	// Progress is the Restore as last read, nil before it was.
	Progress *velero.Restore
	velero   velero.Client
}

// BlockedError says why an undo cannot go on now, and what to do: Velero's
// storage location is not Available (Reason StorageUnavailable), or the
// Restore it made failed (RestoreFailed). Nothing more was restored. With
// Options.Retry, RetryAt is when the next attempt is made (once the
// location is Available).
type BlockedError struct {
	Reason, Message string
	RetryAt         time.Time
}

func (e *BlockedError) Error() string { return e.Message }

// Run undoes the owner's uninstall here: it restores, from its verified
// Backup, what the uninstall destroyed and is missing now, follows the
// Restore, and reports every object. An *OperatorRunningError says that
// the operator runs, a *BlockedError that Velero cannot restore now:
// nothing was restored then.
func Run(ctx context.Context, c client.Client, o Options) (*Result, error) {
	began := time.Now()
	res, err := Step(ctx, c, o)
	said := 0
	for err == nil && res.UnderWay {
		if res.Binding > 0 {
			// The Restore ended: its claims are being made from their snapshots.
			err = waitBinding(ctx, res, o, &said, time.Since(began))
		} else {
			_, err = follow(ctx, res.velero, res.Restore, o)
		}
		if err != nil {
			return res, err
		}
		o.Restore = res.Restore
		res, err = Step(ctx, c, o)
	}
	return res, err
}

// Step takes an undo as far as it goes without waiting: it finds the
// Backup, and then either finds a Restore of the Backup under way
// (o.Restore's, or one an earlier undo made) or makes the Restore of what
// is missing (the operator stopped, Velero's storage location Available),
// and returns with UnderWay set; or, nothing left to restore (o.Restore
// ended), links the restored objects to their owners again and reports
// every object. Run again, it picks up where the last one stopped: what it
// decides is read from the cluster each time.
func Step(ctx context.Context, c client.Client, o Options) (*Result, error) {
	f, err := find(ctx, c, o.Owner, o.VeleroNamespace)
	if err != nil {
		return nil, err
	}
	res := &Result{Outcome: undoplan.Outcome{Backup: f.velero.Namespace + "/" + f.backup.Name, From: f.from}, velero: f.velero}
	wanted, err := selected(f.destroyed, o)
	if err != nil {
		return res, err
	}
	inv, err := take(ctx, c, wanted)
	if err != nil {
		return res, err
	}
	if err := inv.refusedList(); err != nil && !o.ReportOnly {
		return res, err
	}
	var missing []decide.Held
	res.Rows, missing = undoplan.Rows(wanted, func(h decide.Held) undoplan.Found {
		return undoplan.Found{Unread: inv.unreadWhy(h), There: inv.has(h)}
	})
	missing = undoplan.LeaveOutUnserved(undoplan.UnservedInput{Missing: missing, Versions: f.destroyed.Versions, Served: inv.served}, res.Rows)
	if done, err := restoreStep(ctx, c, f, o, missing, res); err != nil || !done {
		return res, err
	}
	links, err := linkOwners(ctx, c, f.destroyed, inv, f.backup.Name, o.ReportOnly)
	if err != nil {
		return res, err
	}
	if !o.ReportOnly {
		if err := unmarkClaims(ctx, c, inv, f.backup.Name); err != nil {
			return res, err
		}
	}
	snapshots := map[string]bool{}
	for _, v := range f.destroyed.Volumes {
		snapshots[v.Claim.Namespace+"/"+v.Claim.Name] = v.Snapshot
	}
	for i, row := range res.Rows {
		key := row.Object.Namespace + "/" + row.Object.Name
		m := inv.there[row.Object]
		after := undoplan.After{Restored: res.Restore != "" && m != nil && m.Labels[RestoreNameLabel] == res.Restore,
			Claim: inv.claims[key], Snapshot: snapshots[key]}
		if l, ok := links[row.Object]; ok {
			after.Link = &l
		}
		res.Rows[i] = undoplan.Settle(row, after)
		if res.Rows[i].State == undoplan.StateRestored && undoplan.Binding(after.Claim, after.Snapshot) {
			res.Binding++
		}
	}
	if res.Binding > 0 && res.Progress != nil && time.Since(res.Progress.Completed) < undoplan.ClaimBindWait {
		res.UnderWay = true
	}
	return res, nil
}

// restoreStep is the Restore part of a step: done when nothing is left to
// restore (o.Restore, if any, has ended), else the Restore under way or
// just made is res.Restore, and res.UnderWay is set.
func restoreStep(ctx context.Context, c client.Client, f *found, o Options, missing []decide.Held, res *Result) (done bool, _ error) {
	var r *velero.Restore
	if o.Restore != "" {
		var err error
		if r, err = f.velero.Restore(ctx, o.Restore); err != nil {
			return false, err
		}
		if r != nil && !r.Ended() {
			res.follow(r)
			return false, nil
		}
	}
	if o.ReportOnly {
		if r != nil {
			res.ended(r)
		}
		return true, nil
	}
	made, err := f.velero.Restores(ctx, o.Owner.Hash(), f.backup.Name)
	if err != nil {
		return false, err
	}
	next := undoplan.NextRestore(f.backup.Name, missing, madeOf(made))
	switch {
	case next.Follow != "":
		res.follow(restoreNamed(made, next.Follow))
		return false, nil
	case r != nil && !r.Failed():
		res.ended(r)
		return true, nil
	case r != nil:
		if blocked := failedRestore(f, r, o.Retry); blocked != nil {
			res.ended(r)
			return false, blocked
		}
	}
	if len(missing) == 0 {
		return true, nil
	}
	if err := mayRestore(ctx, c, f, o, next); err != nil {
		return false, err
	}
	res.Restore, res.Attempt, res.UnderWay = next.Name, next.Attempt, true
	return false, f.velero.CreateRestore(ctx, next.Name, next.Attempt, o.Owner, velero.RestoreSpec{Backup: f.backup, Objects: missing, Excluded: undoplan.Excluded})
}

// follow records the Restore under way r.
func (res *Result) follow(r *velero.Restore) {
	res.Restore, res.RestorePhase, res.Attempt, res.UnderWay, res.Progress = r.Name, r.Phase, r.Attempt, true, r
}

// ended records the Restore r, which ended.
func (res *Result) ended(r *velero.Restore) {
	res.Restore, res.RestorePhase, res.Attempt, res.Progress = r.Name, r.Phase, r.Attempt, r
}

// mayRestore checks, before the Restore next is made, that the operator
// does not run (unless o.BesideOperator) and that Velero can read the
// Backup's storage location: an *OperatorRunningError or a *BlockedError
// when not.
func mayRestore(ctx context.Context, c client.Client, f *found, o Options, next undoplan.Next) error {
	if !o.BesideOperator {
		why, err := operatorRunning(ctx, c, o.Owner, undoplan.CustomResources(f.destroyed.Deleted, f.destroyed.Dependents))
		if err != nil {
			return err
		}
		if why != "" {
			return &OperatorRunningError{Message: why}
		}
	}
	loc, err := f.velero.Location(ctx, f.backup.StorageLocation)
	if err != nil || loc.Available() {
		return err
	}
	what := loc.What(f.velero.Namespace)
	state := "does not exist (velero backup-location get)"
	if loc.Found {
		state = fmt.Sprintf("is %q, not Available: %s", cmp.Or(loc.Phase, "not validated yet"), cmp.Or(loc.Message, "Velero gave no message"))
	}
	msg := fmt.Sprintf("Velero's %s, where Backup %s is, %s; Velero would refuse a Restore from it (FailedValidation), so none was made: bring the storage back, and once Velero reports the location Available (it validates it every minute, or as its validationFrequency says) the undo makes Restore %s",
		what, f.backup.Name, state, next.Name)
	if next.After != nil {
		msg += fmt.Sprintf(" (attempt %d, after attempt %d, %s, %s)", next.Attempt, next.After.Attempt, next.After.Name, failedPhase(next.After))
	}
	return &BlockedError{Reason: cleanupv1alpha1.UndoReasonStorageUnavailable, Message: msg}
}

// failedRestore is the *BlockedError of the Restore r the undo made, which
// failed: the next attempt is made by a person running the undo again, or,
// with retry, once undoplan.RetryAt has come (nil then: make it now).
func failedRestore(f *found, r *velero.Restore, retry bool) *BlockedError {
	b := &BlockedError{Reason: cleanupv1alpha1.UndoReasonRestoreFailed}
	if retry {
		if b.RetryAt = undoplan.RetryAt(madeOf([]*velero.Restore{r})[0]); !time.Now().Before(b.RetryAt) {
			return nil
		}
	}
	b.Message = RestoreFailedMessage(f.velero.Namespace, r, b.RetryAt)
	return b
}

// RestoreFailedMessage says why Velero's Restore namespace/r, which an undo
// made, failed, and what comes next: the Undo's own next attempt at
// retryAt, or (zero) a person running the undo again.
func RestoreFailedMessage(namespace string, r *velero.Restore, retryAt time.Time) string {
	msg := fmt.Sprintf("Velero's Restore %s/%s (attempt %d) ended %s: %s; nothing more was restored. ", namespace, r.Name, r.Attempt, r.Phase, r.Why())
	if retryAt.IsZero() {
		return msg + "Once what failed is mended (velero restore describe " + r.Name + " --details; velero backup-location get), run the undo again: it makes a new attempt, never following the failed one"
	}
	return fmt.Sprintf("%sThe Undo makes attempt %d at %s, once Velero's storage location is Available", msg, r.Attempt+1, retryAt.UTC().Format(time.RFC3339))
}

// failedPhase says how an attempt that ended went.
func failedPhase(m *undoplan.Made) string {
	if m.Failed {
		return "which failed"
	}
	return "which did not bring these objects back"
}

// madeOf are Restores in pkg/decide's terms.
func madeOf(rs []*velero.Restore) []undoplan.Made {
	out := make([]undoplan.Made, len(rs))
	for i, r := range rs {
		out[i] = undoplan.Made{Name: r.Name, Attempt: r.Attempt, UnderWay: !r.Ended(), Failed: r.Failed(), Ended: cmp.Or(r.Completed, r.Created)}
	}
	return out
}

// restoreNamed is the Restore of rs called name.
func restoreNamed(rs []*velero.Restore, name string) *velero.Restore {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return &velero.Restore{Name: name, Attempt: 1}
}

// SelectionError says that a selection names nothing the uninstall
// destroyed, or cannot be made: nothing was written.
type SelectionError struct{ Err error }

func (e *SelectionError) Error() string { return e.Err.Error() }
func (e *SelectionError) Unwrap() error { return e.Err }

// selected are the objects the undo restores: what undoplan.Restorable says, as
// o.Selection narrows it.
func selected(d *destroyed.Record, o Options) ([]decide.Held, error) {
	all := undoplan.Restorable(d.Deleted, d.Dependents)
	if !o.Selection.Empty() && len(d.Origins) == 0 {
		return nil, &SelectionError{fmt.Errorf("the uninstall's record beside Backup %s keeps no origins (it was made by an earlier csv-cleaner), so no part of it can be told from the rest: undo all of it", d.Backup)}
	}
	out, err := undoplan.Select(undoplan.SelectInput{Selection: o.Selection, Restorable: all, Deleted: d.Deleted, Origins: d.Origins})
	if err != nil {
		return nil, &SelectionError{err}
	}
	return out, nil
}

// waitBinding says how many restored claims are still being made from their
// snapshots (when that changed since it last said, *said), and waits a
// poll (the undo being age old) before the next step looks again.
func waitBinding(ctx context.Context, res *Result, o Options, said *int, age time.Duration) error {
	if o.Progress != nil && res.Binding != *said {
		*said = res.Binding
		_, _ = fmt.Fprintf(o.Progress, "Velero's Restore %s ended; %d restored claims are being bound to volumes made from their snapshots\n", res.Restore, res.Binding)
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting for %d restored claims to be bound: %w (run the undo again to follow them)", res.Binding, ctx.Err())
	case <-time.After(pollAfter(o.Poll, age)):
		return nil
	}
}

// follow reads the Restore until it ends, saying so to o.Progress each
// time it moves on.
func follow(ctx context.Context, v velero.Client, name string, o Options) (*velero.Restore, error) {
	var r *velero.Restore
	err := followUntil(ctx, o.Poll, o.Stalled, o.say, func(err error) error {
		return fmt.Errorf("waiting for Velero's Restore %s/%s: %w (it goes on: run the undo again to follow it)", v.Namespace, name, err)
	}, func(ctx context.Context) (sighting, error) {
		var err error
		if r, err = v.Restore(ctx, name); err != nil || r == nil {
			return sighting{}, err
		}
		seen := r
		return sighting{line: report.RestoreLine(v.Namespace, name, seen), ended: seen.Ended(),
			stalled: func(since time.Duration) string { return report.RestoreStalled(v.Namespace, name, seen, since) }}, nil
	})
	return r, err
}

// say writes a line to o.Progress, if any.
func (o Options) say(line string) {
	if o.Progress != nil {
		_, _ = fmt.Fprintln(o.Progress, line)
	}
}
