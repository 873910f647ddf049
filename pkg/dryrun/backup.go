package dryrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// BackupForeseen is the backup gate as `csv-cleaner plan` foresees it:
// the Backup the uninstall would make (or has made) of what it deletes,
// and what would block it.
type BackupForeseen struct {
	Tool      string `json:"tool"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Planned is how many objects the uninstall deletes; Dependents, how
	// many the garbage collector deletes with them; Volumes, how many
	// volumes' snapshots the Backup must hold.
	Planned    int `json:"planned"`
	Dependents int `json:"dependents"`
	Volumes    int `json:"volumes"`
	// Namespaces and Resources are what the Backup would include.
	Namespaces []string `json:"namespaces,omitempty"`
	Resources  []string `json:"resources,omitempty"`
	// Phase is the Backup's, when it exists already.
	Phase string `json:"phase,omitempty"`
	// Expected says how long Velero's Backup is expected to take, where
	// its item-block workers are known (decide.ExpectedNote).
	Expected string `json:"expected,omitempty"`
	// Reason and Message say what would block the gate ("" when nothing would).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// backupPlan is what Foresee needs of an owner whose policy asks for a backup.
type backupPlan struct {
	kind     string
	subject  client.Object
	settings *decide.BackupSettings
}

// PlanBackup notes, for the owner of kind, that the uninstall's deletes wait for a backup
// (settings.Backup): Foresee then foresees the backup gate. It reads nothing.
func (d *DryRun) PlanBackup(kind string, subject client.Object, settings decide.Settings) {
	if settings.Backup != nil {
		d.backupPlan = &backupPlan{kind: kind, subject: subject, settings: settings.Backup}
	}
}

// foreseeDependents reads, as the backup gate does, what the garbage
// collector deletes with the plan's deletions, and what a backup would hold
// of the claims among them. What it cannot read is a note, or, with a
// backup, a problem that blocks the gate (foreseeBackup).
func (d *DryRun) foreseeDependents(ctx context.Context, c client.Client, disc discovery.DiscoveryInterface) error {
	if disc == nil {
		d.Notes = append(d.Notes, "the dependents the garbage collector would delete were not read")
		return nil
	}
	deletions, err := decide.DeletionsOf(d.Items, PluralOf(c.RESTMapper()))
	if err != nil {
		d.Notes = append(d.Notes, "the dependents could not be read: "+err.Error())
		return nil
	}
	s := dependents.Scanner{Discovery: disc, Reader: c}
	scan, err := s.Scan(ctx, decide.ScanSkip(d.kinds))
	if err != nil {
		return err
	}
	nodes := decide.Dependents(decide.ClosureInput{Nodes: scan.Nodes, Deleted: decide.DeletedByName(deletions)})
	v := &cleanupv1alpha1.VeleroBackup{}
	if d.backupPlan != nil && d.backupPlan.settings.Velero != nil {
		v = d.backupPlan.settings.Velero
	}
	volumes, err := s.Volumes(ctx, scan, nodes, v)
	if err != nil {
		return err
	}
	// What could not be read is judged against what the uninstall destroys;
	// it blocks the backup gate only (foreseeBackup).
	d.UnreadDependents, d.dependentsProblem = decide.JudgeUnread(decide.UnreadInput{Kinds: scan.Unread, Dependents: nodes,
		Reach: decide.ReachOf(slices.Concat(deletions, dependents.Helds(nodes)))})
	d.Dependents, d.Volumes, d.dependentNodes = dependents.Helds(nodes), volumes, nodes
	return nil
}

// foreseeBackup foresees the backup gate, writing nothing: the Backup the
// run would make of the plan's deletions and their dependents, whether
// Velero is there and its storage location Available (or how far an
// existing Backup got), whether their volumes can be snapshotted, and
// whether csv-cleaner's identities hold the rights it needs in Velero's
// namespace. What would block the gate blocks the plan's verdict.
func (d *DryRun) foreseeBackup(ctx context.Context, c client.Client, ids []rbac.Identity) error {
	b := d.backupPlan
	deletions, err := decide.DeletionsOf(d.Items, PluralOf(c.RESTMapper()))
	if err != nil {
		d.Notes = append(d.Notes, "the backup could not be foreseen: "+err.Error())
		return nil
	}
	step := &BackupForeseen{Tool: cleanupv1alpha1.BackupToolVelero, Planned: len(deletions), Dependents: len(d.Dependents), Volumes: decide.Snapshots(d.Volumes)}
	d.Backup = step
	block := func(p *decide.Problem) {
		step.Reason, step.Message = p.Reason, p.Message
		d.problems = append(d.problems, *p)
		d.accessDenied = true // the gate deletes nothing until it opens
	}
	if b.settings.Velero == nil {
		block(velero.Unavailable("CleanupPolicy "+d.Policy, "CleanupPolicy %s asks for a backup without naming a tool csv-cleaner knows (velero)", d.Policy))
		return nil
	}
	if len(deletions) == 0 {
		step.Message = "nothing would be deleted: no Backup is needed"
		return nil
	}
	v := velero.Client{Live: c, Namespace: b.settings.Velero.Namespace}
	content := decide.BackupScopeOfKinds(d.kinds, d.targets, deletions, dependents.Helds(d.dependentNodes))
	step.Namespace, step.Namespaces, step.Resources = v.Namespace, content.Namespaces, content.Resources()
	step.Name = decide.BackupName(b.kind, b.subject.GetNamespace(), b.subject.GetName(), b.subject.GetUID(), 1)
	step.Message = fmt.Sprintf("a Velero Backup of the %d objects to delete, the %d the garbage collector deletes with them and %d volumes' snapshots is made and verified before the first delete", len(deletions), step.Dependents, step.Volumes)
	if workers, known, err := v.Workers(ctx); err == nil && known {
		step.Expected = decide.ExpectedNote(step.Volumes, workers)
	}
	if d.dependentsProblem != nil {
		block(d.dependentsProblem)
	}
	for _, vol := range d.Volumes {
		if vol.Problem != nil {
			block(vol.Problem)
		}
	}
	if err := d.foreseeVelero(ctx, v, step, block); err != nil {
		return err
	}
	return d.foreseeBackupRights(ctx, c, ids, v.Namespace, block)
}

// foreseeVelero reads the Backup, or else the storage location it would go to.
func (d *DryRun) foreseeVelero(ctx context.Context, v velero.Client, step *BackupForeseen, block func(*decide.Problem)) error {
	var problem *decide.Problem
	backup, err := v.Backup(ctx, step.Name)
	if err == nil && backup == nil {
		problem, err = v.LocationProblem(ctx, d.backupPlan.settings.Velero.StorageLocation)
	}
	switch {
	case errors.As(err, &problem):
	case apierrors.IsForbidden(err):
		d.Notes = append(d.Notes, "Velero's objects were not read: "+err.Error())
		return nil
	case err != nil:
		return err
	case backup != nil:
		step.Phase = backup.Phase
		step.Message = fmt.Sprintf("Velero's Backup %s/%s exists (%s): the run waits for it and verifies it before the first delete", v.Namespace, step.Name, decide.BackupPhaseOrNew(step.Phase))
		problem = decide.GateOnBackup(step.Name, step.Phase).Problem
	}
	if problem != nil {
		block(problem)
	}
	return nil
}

// foreseeBackupRights asks whether the identities hold the rights the gate
// uses in Velero's namespace; a right none of them holds blocks.
func (d *DryRun) foreseeBackupRights(ctx context.Context, c client.Client, ids []rbac.Identity, namespace string, block func(*decide.Problem)) error {
	if len(ids) == 0 {
		return nil // identities() said why in a note
	}
	var missing []string
	for _, r := range velero.Rights {
		allowed := false
		for _, id := range ids {
			review := rbac.AccessReview(id, authorizationv1.ResourceAttributes{Verb: r.Verb, Group: r.Group, Resource: r.Resource, Namespace: namespace})
			if err := c.Create(ctx, review); err != nil {
				if apierrors.IsForbidden(err) {
					d.Notes = append(d.Notes, "csv-cleaner's rights in Velero's namespace were not checked: "+err.Error())
					return nil
				}
				return fmt.Errorf("asking whether %s may %s %s in %s: %w", id, r.Verb, r.Resource, namespace, err)
			}
			allowed = allowed || review.Status.Allowed
		}
		if !allowed {
			missing = append(missing, r.Verb+" "+r.Resource)
		}
	}
	if len(missing) > 0 {
		p := &decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "Velero's namespace " + namespace,
			Message: fmt.Sprintf("csv-cleaner may not %s in namespace %s: apply manifests/velero/role.yaml there (docs/backup.md#rights)", strings.Join(missing, ", "), namespace)}
		d.Refusals = append(d.Refusals, Foreseen{Kind: "Backup.velero.io", Reason: p.Reason, Object: p.Object, Message: p.Message})
		block(p)
	}
	return nil
}
