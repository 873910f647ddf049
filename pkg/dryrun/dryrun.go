package dryrun

import "github.com/csv-cleaner/csv-cleaner/pkg/decide"

// DryRun is what an uninstall of a CSV, or of a ClusterExtension, would
// delete and keep, as the cluster is now.
type DryRun struct {
	// Owner is what the plan is of: a CSV or a ClusterExtension. The plan's
	// JSON names it as it always has (ownerKeys): "csv" with the CSV's
	// namespace and name, or "clusterExtension" with the extension's name.
	Owner  decide.Owner `json:"-"`
	Policy string       `json:"policy,omitempty"`
	// Verdict is Uninstall, Skipped (with Reason), Unmanaged, Blocked (with
	// Reason), or Incomplete (some kinds could not be read: Unread).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	// UninstallMessage is the operator author's words to whoever
	// uninstalls it (a CSV's operator.openshift.io/uninstall-message).
	UninstallMessage string `json:"uninstallMessage,omitempty"`
	// Items are listed for an Uninstall, and for a Reinstall skip: what the
	// uninstall would do once the Subscription is deleted.
	Items []DryRunItem `json:"items"`
	// Refusals are what the run would be refused, per owned kind (Foresee).
	Refusals []Foreseen `json:"refusals,omitempty"`
	// Unread are the kinds whose instances the plan could not read, with why
	// and what the run does there.
	Unread []Unread `json:"unread,omitempty"`
	// Dependents are what the garbage collector deletes because the
	// uninstall deletes its items (their ownerReferences lead there), but
	// the kinds a controller makes again (Foresee).
	Dependents []decide.Held `json:"dependents,omitempty"`
	// Volumes are the PersistentVolumeClaims among the dependents, and what
	// a backup holds of each one's data.
	Volumes []decide.Volume `json:"volumes,omitempty"`
	// UnreadDependents are the kinds of which the reading of the dependents
	// could not read every object (a conversion webhook that fails, a storage
	// error, an API that is down, a kind the caller may not list), each
	// judged against what the uninstall destroys: a warning, which blocks
	// only the backup gate, and only where it concerns the uninstall.
	UnreadDependents []decide.UnreadKind `json:"unreadDependents,omitempty"`
	// Backup is the backup gate, when the policy asks for a backup (Foresee).
	Backup *BackupForeseen `json:"backup,omitempty"`
	// Notes say what the plan could not foresee, and why.
	Notes []string `json:"notes,omitempty"`

	foresight *foresight
	// backupPlan is what Foresee needs to foresee the backup gate (PlanBackup).
	backupPlan *backupPlan
	// dependentNodes are Dependents as read; dependentsProblem says what
	// the backup gate meets of what could not be read (UnreadDependents).
	dependentNodes    []decide.Node
	dependentsProblem *decide.Problem
	// problems are what the run would be refused, found so far; they make the verdict Blocked (settle).
	problems []decide.Problem
	// accessDenied: csv-cleaner lacks a right on operands, so the run deletes nothing until it has it.
	accessDenied bool
	// verdictMessage is the verdict's message before settle.
	verdictMessage string
	// kinds are the CRDs whose instances the uninstall deletes, in
	// targets: the gate's Backup includes them (backupContent).
	kinds   []decide.CRDScope
	targets decide.NamespaceSet
	// origins are the instances it deletes as they are (their UIDs and
	// owners): what the backup gate keeps beside the Backup for the undo.
	origins []decide.Origin
}

// PlanDepth is how far a plan reads.
type PlanDepth int

const (
	// PlanAll lists and decides every instance: what `csv-cleaner plan`
	// prints, and what the backup gate verifies a Backup against.
	PlanAll PlanDepth = iota
	// PlanKinds reads all but the instances: it says which kinds' instances
	// the uninstall deletes, and where, as the Backup made before they are
	// listed includes them (decide.BackupScopeOfKinds).
	PlanKinds
)

// DryRunItem is one object and what the uninstall would do with it: the
// item pkg/decide decides, which the uninstall carries out.
type DryRunItem = decide.Item

// Count returns how many items have the action.
func (d *DryRun) Count(action string) int {
	n := 0
	for _, it := range d.Items {
		if it.Action == action {
			n++
		}
	}
	return n
}

// Kinds are the CRDs whose instances the uninstall deletes (in Targets):
// the backup gate's Backup includes them.
func (d *DryRun) Kinds() []decide.CRDScope { return d.kinds }

// Targets are the namespaces the uninstall deletes the Kinds' instances in.
func (d *DryRun) Targets() decide.NamespaceSet { return d.targets }

// Origins are the instances the uninstall deletes as they are (their UIDs
// and owners): what the backup gate keeps beside the Backup for the undo.
func (d *DryRun) Origins() []decide.Origin { return d.origins }

// Judged sets the plan's verdict before its items are read
// (decide.JudgePlan), and reports whether the plan lists nothing more.
func (d *DryRun) Judged(v decide.PlanVerdict) (done bool) {
	d.Verdict, d.Reason, d.Message = v.Verdict, v.Reason, v.Message
	return v.Done
}
