package backupgate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
)

// makeBackup makes the uninstall's Backup (name, at attempt) of a plan of
// the kinds (asked for first) once Velero's storage location is Available
// and its volumes can be snapshotted, then asks for the plan of the
// instances, which the gate keeps while Velero backs them up (keepPlan).
// An uninstall that destroys nothing needs no Backup (done).
func (g *Gate) makeBackup(ctx context.Context, tool backupTool, namespace, name string, attempt int32) (done bool, _ error) {
	began := time.Now()
	kinds, err := g.handed(dryrun.PlanKinds)
	if err != nil || kinds == nil {
		return false, err
	}
	others, err := decide.DeletionsOf(kinds.Items, dryrun.PluralOf(g.Client.RESTMapper()))
	if err != nil {
		return false, fmt.Errorf("naming what the backup must hold: %w", err)
	}
	// The kinds nobody can read are judged once the deletions are known
	// exactly, when the Backup is verified (verifiedDestroyed).
	scan, err := g.scanDependents(ctx, g.pass.Settings.Backup.Velero, kinds.Kinds(), decide.DeletedByKind(kindSet(kinds.Kinds()), kinds.Targets(), others))
	if err != nil {
		return false, err
	}
	volumes := scan.volumes
	content := decide.BackupScopeOfKinds(kinds.Kinds(), kinds.Targets(), others, dependents.Helds(readable(scan.found)))
	if content.Empty() {
		g.openWithoutBackup(namespace, "", attempt, nil)
		return true, nil
	}
	if content.NeedsNamespaces() {
		if content.Existing, err = namespacesThere(ctx, g.Live); err != nil {
			return false, err
		}
	}
	problem, err := tool.LocationProblem(ctx, g.pass.Settings.Backup.Velero.StorageLocation)
	if err != nil {
		return false, err
	}
	if problem != nil {
		return false, problem
	}
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Creating Velero's Backup of what the uninstall will destroy", "backup", klog.KRef(namespace, name), "attempt", attempt,
		"scanTook", time.Since(began).Round(time.Millisecond).String(), "namespaces", content.Namespaces, "resources", content.Resources(),
		"named", len(content.Named), "volumes", decide.Snapshots(volumes))
	if err := tool.CreateBackup(ctx, name, g.pass.Owner, content, g.pass.Settings.Backup.Velero); err != nil {
		return false, err
	}
	st := g.noteBackup(namespace, name, attempt, "", 0)
	st.Namespaces = content.WholeIn
	if workers, known, err := tool.Workers(ctx); err != nil || !known {
		log.V(1).Info("Velero's item-block workers are not known: the Backup's time is not foreseen", "error", err)
	} else {
		st.Expected = decide.ExpectedNote(decide.Snapshots(volumes), workers)
	}
	g.pass.Event(corev1.EventTypeNormal, "BackupCreated", "Backup", "Created Velero's Backup %s/%s of %s; nothing is deleted before it is complete and holds every object the uninstall destroys",
		namespace, name, describeContent(content))
	g.waitOnBackup(decide.WaitingOnBackup(decide.BackupWait{Namespace: namespace, Name: name, Attempt: attempt, Expected: st.Expected, LastFailure: st.LastFailure}), 0)
	return g.needPlan(dryrun.PlanAll)
}

// keepPlan keeps, while Velero backs up the uninstall's Backup (name, at
// attempt, of namespaces), the plan of its instances the gate asked for
// once it made the Backup, for the pass that verifies it. An uninstall
// whose plan deletes nothing needs no Backup (done).
func (g *Gate) keepPlan(ctx context.Context, namespace, name string, attempt int32, namespaces []string) (done bool, _ error) {
	p, err := g.handedUninstall()
	if err != nil || p == nil {
		return false, err
	}
	logr.FromContextOrDiscard(ctx).Info("Planned the uninstall while Velero backs it up", "backup", klog.KRef(namespace, name), "planned", len(p.deletions))
	if len(p.deletions) == 0 {
		g.openWithoutBackup(namespace, name, attempt, namespaces)
		return true, nil
	}
	g.Plans.keep(g.pass.Owner.UID, p)
	return false, nil
}

// namespacesThere are the names of the namespaces there are.
func namespacesThere(ctx context.Context, r client.Reader) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the namespaces: %w", err)
	}
	out := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	return out, nil
}

// kindSet are the kinds (Kind.group) of scopes.
func kindSet(scopes []decide.CRDScope) map[string]bool {
	out := make(map[string]bool, len(scopes))
	for _, s := range scopes {
		out[s.Kind] = true
	}
	return out
}

// readable are the nodes Velero can read: not those read only at the
// version they are stored at (decide.Node.Stranded), which a Backup that
// names them would fail on; the verification judges those.
func readable(nodes []decide.Node) []decide.Node {
	return slices.DeleteFunc(slices.Clone(nodes), func(n decide.Node) bool { return n.Stranded })
}

// openWithoutBackup opens the gate of an uninstall that destroys nothing,
// whose Backup (name, when one was made) holds nothing it needs, nor
// anything of the namespaces it looked in (an operand there later is kept
// all the same).
func (g *Gate) openWithoutBackup(namespace, name string, attempt int32, namespaces []string) {
	now := metav1.Now()
	g.out.Backup = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name, Attempt: attempt,
		Verified: true, VerifiedTime: &now, Namespaces: namespaces}
}

// describeContent says, for a person, what a Backup includes.
func describeContent(c decide.BackupContent) string {
	where := fmt.Sprintf("%d namespaces", len(c.Namespaces))
	switch {
	case slices.Contains(c.Namespaces, decide.EveryNamespace):
		where = "every namespace"
	case len(c.Namespaces) == 1:
		where = "namespace " + c.Namespaces[0]
	case len(c.Namespaces) == 0:
		where = "the cluster"
	}
	return fmt.Sprintf("%s in %s (%d objects by name)", strings.Join(c.Resources(), ", "), where, len(c.Named))
}

// handedUninstall is what the owner's uninstall deletes, as the plan handed
// to this run of the gate says; nil when none was handed at PlanAll.
func (g *Gate) handedUninstall() (*planned, error) {
	if g.pass.Plan == nil || g.pass.Depth != dryrun.PlanAll {
		return nil, nil
	}
	d, err := g.handed(dryrun.PlanAll)
	if err != nil {
		return nil, err
	}
	deletions, err := decide.DeletionsOf(d.Items, dryrun.PluralOf(g.Client.RESTMapper()))
	if err != nil {
		return nil, fmt.Errorf("naming what the uninstall deletes: %w", err)
	}
	return &planned{deletions: deletions, kinds: d.Kinds(), origins: d.Origins()}, nil
}

// needPlan asks the engine for the owner's plan at depth, and to run the
// gate again with it in this pass.
func (g *Gate) needPlan(depth dryrun.PlanDepth) (bool, error) {
	g.out.NeedsPlan = &depth
	return false, nil
}

// handed is the owner's plan handed to this run at depth, nil (with the
// engine asked for it) when it has none at that depth. A plan that cannot
// tell everything the uninstall deletes blocks the gate.
func (g *Gate) handed(depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	d := g.pass.Plan
	if d == nil || g.pass.Depth != depth {
		_, err := g.needPlan(depth)
		return nil, err
	}
	switch d.Verdict {
	case decide.VerdictUninstall:
	case decide.VerdictBlocked:
		return nil, &decide.Problem{Reason: d.Reason, Object: g.pass.Owner.String(), Message: d.Message + "; nothing is backed up or deleted before that is fixed"}
	case decide.VerdictIncomplete:
		reason := cleanupv1alpha1.BlockedBackupIncomplete
		var kinds []string
		for _, unread := range d.Unread {
			kinds = append(kinds, unread.Kind+" ("+unread.Reason+")")
			if unread.Reason == dryrun.ReadFailed {
				return nil, fmt.Errorf("planning what the backup must hold: %s", unread.Message)
			}
			if unread.Reason == cleanupv1alpha1.BlockedForbidden {
				reason = cleanupv1alpha1.BlockedForbidden
			}
		}
		return nil, &decide.Problem{Reason: reason, Object: g.pass.Owner.String(),
			Message: fmt.Sprintf("the uninstall cannot list everything it would delete (%s), so no backup can be shown to hold it: nothing is deleted before one does", strings.Join(kinds, ", "))}
	default:
		return nil, fmt.Errorf("planning what the backup must hold: the plan says %s (%s)", d.Verdict, d.Message)
	}
	return d, nil
}
