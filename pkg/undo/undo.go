package undo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/restore"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// Options are what an undo is asked to do.
type Options struct {
	Owner decide.Owner
	// VeleroNamespace is where to look for the Backups when the record is gone.
	VeleroNamespace string
	// WithoutOperator restores the CRDs and objects without the operator
	// installed again.
	WithoutOperator bool
	// Selection narrows the undo to some custom resources and what they
	// owned (restore.Select); empty, everything.
	Selection restore.UndoSelection
	// Progress, when set, receives a line each time the Restore moves on.
	Progress io.Writer
	// Poll, when set, is how often the Restore is read; else a fiftieth of
	// its age so far, between 100 ms and 1 s (about 2 % added to its time).
	Poll time.Duration
	// Stalled, when set, is how long a Restore that does not move goes
	// before Progress says so (again each time as long); else a minute.
	Stalled time.Duration
	// Restore is the Restore an earlier step made or followed: a step
	// follows it while it is under way, and makes no other once it ended.
	Restore string
	// ReportOnly reports where everything stands and writes nothing: no
	// Restore, no owners (how `csv-cleaner undo` reads an Undo's end).
	ReportOnly bool
}

// Result is what an undo did (report.Undo, what is printed of it), and
// how far its Restore is.
type Result struct {
	report.Undo
	// UnderWay: the Restore has not ended; Step again once it has.
	UnderWay bool
	// Progress is the Restore as last read, nil before it was.
	Progress *velero.Restore
	velero   velero.Client
}

// Run undoes the owner's uninstall here: it restores, from its verified
// Backup, what the uninstall destroyed and is missing now, follows the
// Restore, and reports every object. A *NotReinstalledError says what to
// reinstall first: nothing was written then.
func Run(ctx context.Context, c client.Client, o Options) (*Result, error) {
	res, err := Step(ctx, c, o)
	for err == nil && res.UnderWay {
		if _, err = follow(ctx, res.velero, res.Restore, o); err != nil {
			return res, err
		}
		o.Restore = res.Restore
		res, err = Step(ctx, c, o)
	}
	return res, err
}

// Step takes an undo as far as it goes without waiting: it finds the
// Backup, checks the reinstall, and then either finds a Restore of the
// Backup under way (o.Restore's, or one an earlier undo made) or makes the
// Restore of what is missing, and returns with UnderWay set; or, nothing
// left to restore (o.Restore ended), links the restored objects to their
// owners again and reports every object. Run again, it picks up where the
// last one stopped: what it decides is read from the cluster each time.
func Step(ctx context.Context, c client.Client, o Options) (*Result, error) {
	f, err := find(ctx, c, o.Owner, o.VeleroNamespace)
	if err != nil {
		return nil, err
	}
	res := &Result{Undo: report.Undo{Backup: f.velero.Namespace + "/" + f.backup.Name, From: f.from}, velero: f.velero}
	if !o.WithoutOperator {
		if err := checkReinstalled(ctx, c, o.Owner, f.destroyed); err != nil {
			return res, err
		}
	}
	wanted, err := selected(f.destroyed, o)
	if err != nil {
		return res, err
	}
	inv, err := take(ctx, c, wanted)
	if err != nil {
		return res, err
	}
	var missing []decide.Held
	res.Rows, missing = restore.Rows(wanted, func(h decide.Held) restore.Found {
		return restore.Found{Unread: inv.unreadWhy(h), There: inv.has(h)}
	})
	missing = restore.LeaveOutUnserved(restore.UnservedInput{Missing: missing, Versions: f.destroyed.Versions, Served: inv.served}, res.Rows)
	if done, err := restoreStep(ctx, f, o, missing, res); err != nil || !done {
		return res, err
	}
	links, err := linkOwners(ctx, c, f.destroyed, inv, f.backup.Name, o.ReportOnly)
	if err != nil {
		return res, err
	}
	snapshots := map[string]bool{}
	for _, v := range f.destroyed.Volumes {
		snapshots[v.Claim.Namespace+"/"+v.Claim.Name] = v.Snapshot
	}
	for i, row := range res.Rows {
		key := row.Object.Namespace + "/" + row.Object.Name
		m := inv.there[row.Object]
		after := restore.After{Restored: res.Restore != "" && m != nil && m.Labels[RestoreNameLabel] == res.Restore,
			Claim: inv.claims[key], Snapshot: snapshots[key]}
		if l, ok := links[row.Object]; ok {
			after.Link = &l
		}
		res.Rows[i] = restore.Settle(row, after)
	}
	return res, nil
}

// restoreStep is the Restore part of a step: done when nothing is left to
// restore (o.Restore, if any, has ended), else the Restore under way or
// just made is res.Restore, and res.UnderWay is set.
func restoreStep(ctx context.Context, f *found, o Options, missing []decide.Held, res *Result) (done bool, _ error) {
	hash := o.Owner.Hash()
	var r *velero.Restore
	var err error
	if o.Restore != "" {
		if r, err = f.velero.Restore(ctx, o.Restore); err != nil {
			return false, err
		}
	}
	if (r == nil || r.Ended()) && !o.ReportOnly {
		if under, err := f.velero.RestoreUnderWay(ctx, hash, f.backup.Name); err != nil {
			return false, err
		} else if under != nil {
			r = under
		}
	}
	switch {
	case r != nil && !r.Ended():
		res.Restore, res.RestorePhase, res.UnderWay, res.Progress = r.Name, r.Phase, true, r
		return false, nil
	case r != nil:
		res.Restore, res.RestorePhase, res.Progress = r.Name, r.Phase, r
		return true, nil
	case len(missing) == 0 || o.ReportOnly:
		return true, nil
	}
	res.Restore, res.UnderWay = restore.Name(f.backup.Name, missing), true
	if err := f.velero.CreateRestore(ctx, res.Restore, o.Owner, velero.RestoreSpec{Backup: f.backup, Objects: missing, Excluded: restore.Excluded}); err != nil {
		return false, err
	}
	return false, nil
}

// SelectionError says that a selection names nothing the uninstall
// destroyed, or cannot be made: nothing was written.
type SelectionError struct{ Err error }

func (e *SelectionError) Error() string { return e.Err.Error() }
func (e *SelectionError) Unwrap() error { return e.Err }

// selected are the objects the undo restores: what restore.Restorable says, as
// o.Selection narrows it.
func selected(d *destroyed.Record, o Options) ([]decide.Held, error) {
	all := restore.Restorable(d.Deleted, d.Dependents, o.WithoutOperator)
	if !o.Selection.Empty() && len(d.Origins) == 0 {
		return nil, &SelectionError{fmt.Errorf("the uninstall's record beside Backup %s keeps no origins (it was made by an earlier csv-cleaner), so no part of it can be told from the rest: undo all of it", d.Backup)}
	}
	out, err := restore.Select(restore.SelectInput{Selection: o.Selection, Restorable: all, Deleted: d.Deleted, Origins: d.Origins})
	if err != nil {
		return nil, &SelectionError{err}
	}
	return out, nil
}

// follow reads the Restore until it ends, saying so to o.Progress each
// time it moves on.
func follow(ctx context.Context, v velero.Client, name string, o Options) (*velero.Restore, error) {
	began, last := time.Now(), ""
	stalled := cmp.Or(o.Stalled, time.Minute)
	moved, said := began, began
	for {
		poll := o.Poll
		if poll <= 0 {
			poll = min(max(time.Since(began)/50, 100*time.Millisecond), time.Second)
		}
		r, err := v.Restore(ctx, name)
		if err != nil {
			return nil, err
		}
		if r != nil {
			line := report.RestoreLine(v.Namespace, name, r)
			now := time.Now()
			switch {
			case line != last:
				if o.Progress != nil {
					_, _ = fmt.Fprintln(o.Progress, line)
				}
				moved, said = now, now
			case now.Sub(said) >= stalled && o.Progress != nil:
				_, _ = fmt.Fprintln(o.Progress, report.RestoreStalled(v.Namespace, name, r, now.Sub(moved)))
				said = now
			}
			last = line
			if r.Ended() {
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for Velero's Restore %s/%s: %w (it goes on: run the undo again to follow it)", v.Namespace, name, ctx.Err())
		case <-time.After(poll):
		}
	}
}
