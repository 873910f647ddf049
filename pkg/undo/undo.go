package undo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// Options are what an undo is asked to do.
type Options struct {
	Owner Owner
	// VeleroNamespace is where to look for the Backups when the record is gone.
	VeleroNamespace string
	// WithoutOperator restores the CRDs and objects without the operator
	// installed again.
	WithoutOperator bool
	// Selection narrows the undo to some custom resources and what they
	// owned (decide.Select); empty, everything.
	Selection decide.UndoSelection
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

// Result is what an undo did.
type Result struct {
	// Backup is the Backup restored from (namespace/name), and From where it was found.
	Backup, From string
	// Restore is the Restore made, "" when nothing was missing.
	Restore string
	// RestorePhase is the Restore's phase when it ended, or as last read.
	RestorePhase string
	Rows         []Row
	// UnderWay: the Restore has not ended; Step again once it has.
	UnderWay bool `json:"-"`
	// Progress is the Restore as last read, nil before it was.
	Progress *velero.Restore `json:"-"`
	velero   velero.Client
}

// Missing counts the objects still missing, not known to be there, or
// restored with a problem.
func (r *Result) Missing() int {
	n := 0
	for _, row := range r.Rows {
		if row.State == StateMissing || row.State == StateUnread || row.Problem != "" {
			n++
		}
	}
	return n
}

// Excluded are the old install's cluster RBAC and webhook configurations:
// the reinstall made its own, and an undo restores none of them.
var Excluded = []string{
	"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
	"validatingwebhookconfigurations.admissionregistration.k8s.io", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
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
	res := &Result{Backup: f.velero.Namespace + "/" + f.backup.Name, From: f.from, velero: f.velero}
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
	for _, h := range wanted {
		row := Row{Object: h, State: StatePresent}
		switch why := inv.unreadWhy(h); {
		case why != "":
			row.State, row.Problem = StateUnread, why+"; not restored: run the undo again once the kind can be listed"
		case !inv.has(h):
			missing = append(missing, h)
			row.State = StateMissing
		}
		res.Rows = append(res.Rows, row)
	}
	missing = restorableNow(f.destroyed, inv, missing, res.Rows)
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
	for i := range res.Rows {
		row := &res.Rows[i]
		if m := inv.there[row.Object]; row.State == StatePresent && res.Restore != "" && m != nil && m.Labels[RestoreNameLabel] == res.Restore {
			row.State = StateRestored
		}
		if l, ok := links[row.Object]; ok {
			row.Owners, row.OwnersLeftOut = l.Linked, l.LeftOut
		}
		if row.State != StateMissing && row.State != StateUnread && row.Object.Group == "" && row.Object.Kind == "PersistentVolumeClaim" {
			key := row.Object.Namespace + "/" + row.Object.Name
			row.Volume, row.Problem = claimVolume(inv.claims[key], row.State == StateRestored && snapshots[key])
		}
	}
	return res, nil
}

// restoreStep is the Restore part of a step: done when nothing is left to
// restore (o.Restore, if any, has ended), else the Restore under way or
// just made is res.Restore, and res.UnderWay is set.
func restoreStep(ctx context.Context, f *found, o Options, missing []decide.Held, res *Result) (done bool, _ error) {
	hash := decide.OwnerHash(o.Owner.Kind(), o.Owner.Namespace, o.Owner.Name)
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
	res.Restore, res.UnderWay = restoreName(f.backup.Name, missing), true
	owner := velero.Owner{Title: f.destroyed.Owner, Hash: hash}
	if err := f.velero.CreateRestore(ctx, res.Restore, owner, velero.RestoreSpec{Backup: f.backup, Objects: missing, Excluded: Excluded}); err != nil {
		return false, err
	}
	return false, nil
}

// restorable are the objects an undo restores: every object the uninstall
// destroyed but the old install's cluster RBAC and webhook configurations,
// and its CRDs only without the operator (a reinstalled operator brings
// its own); the CRDs first, then what it deleted, then the dependents, each
// by resource, namespace and name.
func restorable(d *velero.Destroyed, withoutOperator bool) []decide.Held {
	var out []decide.Held
	rank := map[decide.Held]int{}
	for i, group := range [][]decide.Held{d.Deleted, d.Dependents} {
		for _, h := range group {
			switch {
			case slices.Contains(Excluded, h.ResourceOf()):
			case h.Kind == "CustomResourceDefinition" && !withoutOperator:
			case slices.Contains(out, h):
			default:
				out = append(out, h)
				rank[h] = i + 1
				if h.Kind == "CustomResourceDefinition" {
					rank[h] = 0
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b decide.Held) int {
		return cmp.Or(cmp.Compare(rank[a], rank[b]), strings.Compare(a.ResourceOf()+"/"+a.Namespace+"/"+a.Name, b.ResourceOf()+"/"+b.Namespace+"/"+b.Name))
	})
	return out
}

// SelectionError says that a selection names nothing the uninstall
// destroyed, or cannot be made: nothing was written.
type SelectionError struct{ Err error }

func (e *SelectionError) Error() string { return e.Err.Error() }
func (e *SelectionError) Unwrap() error { return e.Err }

// selected are the objects the undo restores: what restorable says, as
// o.Selection narrows it.
func selected(d *velero.Destroyed, o Options) ([]decide.Held, error) {
	all := restorable(d, o.WithoutOperator)
	if !o.Selection.Empty() && len(d.Origins) == 0 {
		return nil, &SelectionError{fmt.Errorf("the uninstall's record beside Backup %s keeps no origins (it was made by an earlier csv-cleaner), so no part of it can be told from the rest: undo all of it", d.Backup)}
	}
	out, err := decide.Select(decide.SelectInput{Selection: o.Selection, Restorable: all, Deleted: d.Deleted, Origins: d.Origins})
	if err != nil {
		return nil, &SelectionError{err}
	}
	return out, nil
}

// restoreName names the Restore of missing from backup: the same for the
// same objects, so that an undo interrupted and run again follows the
// Restore it made rather than make a second; at most 63 characters, as
// Velero's labels take it.
func restoreName(backup string, missing []decide.Held) string {
	h := sha256.New()
	for _, m := range missing {
		_, _ = fmt.Fprintf(h, "%s/%s/%s\n", m.ResourceOf(), m.Namespace, m.Name)
	}
	suffix := "-undo-" + hex.EncodeToString(h.Sum(nil))[:8]
	if len(backup) > 63-len(suffix) {
		backup = strings.TrimRight(backup[:63-len(suffix)], "-")
	}
	return backup + suffix
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
			line := fmt.Sprintf("Restore %s/%s: %s, %d of %d items restored", v.Namespace, name, cmp.Or(r.Phase, "New"), r.Restored, r.Total)
			if r.Ended() {
				line += fmt.Sprintf(", %d warnings, %d errors", r.Warnings, r.Errors)
				if r.FailureReason != "" || len(r.ValidationErrors) > 0 {
					line += ": " + strings.Join(append([]string{r.FailureReason}, r.ValidationErrors...), "; ")
				}
			}
			now := time.Now()
			switch {
			case line != last:
				if o.Progress != nil {
					_, _ = fmt.Fprintln(o.Progress, line)
				}
				moved, said = now, now
			case now.Sub(said) >= stalled && o.Progress != nil:
				_, _ = fmt.Fprintln(o.Progress, stallNote(v.Namespace, name, r, now.Sub(moved)))
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

// stallNote says that a Restore has not moved for a while, and what Velero
// is likely waiting on.
func stallNote(namespace, name string, r *velero.Restore, still time.Duration) string {
	what := fmt.Sprintf("it has restored %d of %d items; a claim's volume is made from its snapshot and looked at every 10 s", r.Restored, r.Total)
	if r.Total == 0 {
		what = "it has counted nothing to restore yet: Velero waits for its caches of the kinds it restores, and for good on a kind at a version the API server does not serve"
	}
	return fmt.Sprintf("Restore %s/%s: %s for %s with no change: %s; velero restore describe %s and velero restore logs %s say more",
		namespace, name, cmp.Or(r.Phase, "New"), still.Round(time.Second), what, name, name)
}
