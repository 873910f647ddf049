package backupgate

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
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

// verifiedDestroyed checks a completed Backup against what the uninstall
// destroys (its deletions, their dependents read again, their volumes'
// snapshots) and returns it with the kinds it could not read all of, none
// of whose unread objects it may destroy, or the problem that blocks: a
// missing object, or objects nobody can read that it may destroy.
func (g *Gate) verifiedDestroyed(ctx context.Context, backup *velero.Backup, held backupHeld) (*destroyed.Record, []decide.UnreadKind, error) {
	p := g.Plans.take(g.pass.Owner.UID)
	for replanned := p == nil; ; replanned = true {
		if p == nil {
			var err error
			if p, err = g.plannedUninstall(ctx); err != nil {
				return nil, nil, err
			}
		}
		deletions := p.deletions
		scan, err := g.scanDependents(ctx, g.pass.Settings.Backup.Velero, p.kinds, decide.DeletedByName(deletions))
		if err != nil {
			return nil, nil, err
		}
		found, volumes := scan.found, scan.volumes
		gone := slices.Concat(deletions, dependents.Helds(found))
		unread, problem := decide.JudgeUnread(decide.UnreadInput{Kinds: scan.unread, Dependents: found, Reach: decide.ReachOf(gone)})
		if problem != nil {
			return nil, nil, problem
		}
		if _, problem := decide.VerifyBackup(backup.Name, held.list, gone); problem != nil {
			if !replanned {
				p = nil
				continue
			}
			return nil, nil, problem
		}
		if problem := decide.VerifyVolumes(backup.Name, held.volumes, volumes); problem != nil {
			return nil, nil, problem
		}
		return &destroyed.Record{Owner: g.pass.Owner.String(), OwnerKind: g.pass.Owner.Kind, OwnerNamespace: g.pass.Owner.Namespace, OwnerName: g.pass.Owner.Name,
			Backup: backup.Name, Verified: metav1.Now(), Deleted: deletions, Dependents: dependents.Helds(found), Volumes: volumes,
			Origins: originsOf(p.origins, deletions, scan.nodes, found), Versions: decide.BackedUpVersions(held.list)}, unread, nil
	}
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
