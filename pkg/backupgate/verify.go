package backupgate

import (
	"context"
	"errors"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// backupHeld is what a completed Backup holds, as Velero lists it.
type backupHeld struct {
	list    map[string][]string
	volumes []decide.VolumeBackup
}

// backupHolds reads what a completed Backup holds: its resource list and
// its volumes. Velero answers the requests for them in tens of
// milliseconds: the pass waits for the answers (looking every
// downloadPoll, up to downloadWait) rather than end and read everything
// again in the next; ready is false if they have not come.
func (g *Gate) backupHolds(ctx context.Context, tool backupTool, backup *velero.Backup, now time.Time) (backupHeld, bool, error) {
	var h backupHeld
	var listed, volumes bool
	err := wait.PollUntilContextTimeout(ctx, downloadPoll, downloadWait, true, func(ctx context.Context) (bool, error) {
		var err error
		if !listed {
			if h.list, listed, err = tool.ResourceList(ctx, backup, now); err != nil {
				return false, err
			}
		}
		if !volumes {
			if h.volumes, volumes, err = tool.VolumeBackups(ctx, backup, now); err != nil {
				return false, err
			}
		}
		return listed && volumes, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return h, false, nil
	}
	return h, err == nil, err
}

// completedRead is what the pass reads once Velero says a Backup is
// Completed: what the Backup holds, and, beside it, the uninstall's
// dependents as they are now, by the plan kept when the Backup was made or
// the one handed to this run.
type completedRead struct {
	held  backupHeld
	ready bool
	plan  *planned
	// fresh: the plan was read in this pass, not kept from an earlier one.
	fresh bool
	scan  *dependentsScan
}

// readCompleted reads what a completed Backup holds and, at once, the
// dependents of the uninstall's plan: the one handed to this run, else the
// one kept when this process made its Backup; with neither, it reads
// nothing and asks the engine for one (plan nil). Both reads follow
// Velero's Completed, so a dependent made while the Backup ran is among
// those it must hold. When the Backup's lists are not ready yet, the plan
// is kept for the next pass.
func (g *Gate) readCompleted(ctx context.Context, tool backupTool, backup *velero.Backup, now time.Time) (completedRead, error) {
	r := completedRead{plan: g.Plans.take(g.pass.Owner.UID)}
	handed, err := g.handedUninstall()
	switch {
	case err != nil:
		return r, err
	case handed != nil:
		r.plan, r.fresh = handed, true
	case r.plan == nil:
		_, err := g.needPlan(dryrun.PlanAll)
		return r, err
	}
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		r.held, r.ready, err = g.backupHolds(ectx, tool, backup, now)
		return err
	})
	eg.Go(func() (err error) {
		r.scan, err = g.scanDependents(ectx, g.pass.Settings.Backup.Velero, r.plan.kinds, decide.DeletedByName(r.plan.deletions))
		return err
	})
	err = eg.Wait()
	if err == nil && !r.ready {
		g.Plans.keep(g.pass.Owner.UID, r.plan)
	}
	return r, err
}

// errReplan says that the Backup misses a deletion of a plan kept from an
// earlier pass: the gate asks for the plan as it is now before it judges.
var errReplan = errors.New("the Backup misses a deletion of the plan kept since it was made: planning again")

// verifiedDestroyed checks a completed Backup against what the uninstall
// destroys (its deletions, their dependents read again, their volumes'
// snapshots) and returns it with the kinds it could not read all of, none
// of whose unread objects it may destroy, or the problem that blocks: a
// missing object, or objects nobody can read that it may destroy. When the
// Backup misses a deletion of a plan kept from an earlier pass, it is
// errReplan: the plan as it is now is judged instead.
func (g *Gate) verifiedDestroyed(backup *velero.Backup, read completedRead) (*destroyed.Record, []decide.UnreadKind, error) {
	held, p, scan := read.held, read.plan, read.scan
	found, volumes := scan.found, scan.volumes
	gone := slices.Concat(p.deletions, dependents.Helds(found))
	unread, problem := decide.JudgeUnread(decide.UnreadInput{Kinds: scan.unread, Dependents: found, Reach: decide.ReachOf(gone)})
	if problem != nil {
		return nil, nil, problem
	}
	if _, problem := decide.VerifyBackup(backup.Name, held.list, gone); problem != nil {
		if !read.fresh {
			return nil, nil, errReplan
		}
		return nil, nil, problem
	}
	if problem := decide.VerifyVolumes(backup.Name, held.volumes, volumes); problem != nil {
		return nil, nil, problem
	}
	return &destroyed.Record{Owner: g.pass.Owner, Backup: backup.Name, Verified: metav1.Now(), Deleted: p.deletions, Dependents: dependents.Helds(found),
		Volumes: volumes, Origins: originsOf(p.origins, p.deletions, scan.nodes, found), Versions: decide.BackedUpVersions(held.list)}, unread, nil
}

// originsOf are the origins of what the uninstall destroys: the instances
// it deletes as its plan read them, its other deletions as the scan read
// them (an undo restores none of them, but what they owned names them), and
// the dependents, but the kinds a controller makes again.
func originsOf(instances []decide.Origin, deletions []decide.Held, nodes, dependents []decide.Node) []decide.Origin {
	out := slices.Clone(instances)
	have := make(map[decide.Held]bool, len(out))
	for _, o := range out {
		have[o.Object] = true
	}
	wanted := map[decide.Held]bool{}
	for _, d := range deletions {
		if !have[d] {
			wanted[d] = true
		}
	}
	for _, n := range nodes {
		if wanted[n.Held] {
			out = append(out, decide.OriginOf(n))
		}
	}
	for _, n := range dependents {
		if !decide.Regenerated(n.ResourceOf()) {
			out = append(out, decide.OriginOf(n))
		}
	}
	return out
}
