package cleanup

import (
	"context"
	"errors"
	"fmt"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Actions and reasons of a dry run's items, beside the Keep* reasons.
const (
	ActionDelete = "Delete"
	ActionKeep   = "Keep"

	// DeleteOwnedOperand: an instance of an owned CRD in the target namespaces, created before the uninstall.
	DeleteOwnedOperand = "OwnedOperand"
	// DeleteTerminating: an operand already being deleted; the uninstall waits for its finalizers.
	DeleteTerminating = "AlreadyTerminating"
	// DeleteOwnerLabels: a cluster object with the CSV's three OLM owner labels.
	DeleteOwnerLabels = "OwnerLabels"
	// DeleteInstalledAlongside: an owned CRD OLM installed with this CSV, owned by no other CSV, deleted once its instances are gone.
	DeleteInstalledAlongside = "InstalledAlongside"
)

// Verdicts of a dry run.
const (
	VerdictUninstall = "Uninstall"
	VerdictSkipped   = "Skipped"
	VerdictUnmanaged = "Unmanaged"
	VerdictBlocked   = "Blocked"
)

// CSVRef names a CSV in the plan's JSON, with the keys in lower camel case as every other key.
type CSVRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is namespace/name.
func (c CSVRef) String() string { return types.NamespacedName(c).String() }

// DryRun is what an uninstall of a CSV would delete and keep, as the cluster is now.
type DryRun struct {
	CSV    CSVRef `json:"csv"`
	Policy string `json:"policy,omitempty"`
	// Verdict is Uninstall, Skipped (with Reason), Unmanaged, or Blocked (with Reason).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	// Items are listed for an Uninstall, and for a Reinstall skip: what the
	// uninstall would do once the Subscription is deleted.
	Items []DryRunItem `json:"items"`
}

// DryRunItem is one object and what the uninstall would do with it.
type DryRunItem struct {
	Action    string `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
}

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

// PlanUninstall reports what an uninstall of the CSV would delete and keep
// right now, and why, through the same decisions the controller takes. It
// only reads: every write through c is refused. A CSV that is not being deleted
// is planned as if it were deleted now.
func PlanUninstall(ctx context.Context, c client.Client, key types.NamespacedName, now time.Time) (*DryRun, error) {
	c = readOnly{c}
	r := &Reconciler{Client: c, APIReader: c}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := c.Get(ctx, key, csv); err != nil {
		return nil, fmt.Errorf("getting CSV %s: %w", key, err)
	}
	out := &DryRun{CSV: CSVRef(key), Items: []DryRunItem{}}
	hypothetical := csv.DeletionTimestamp.IsZero()
	if hypothetical {
		csv.DeletionTimestamp = &metav1.Time{Time: now}
	}

	policy, err := r.policyFor(ctx, csv)
	if err != nil {
		return nil, err
	}
	if policy == nil && !csv.IsCopied() {
		out.Verdict, out.Message = VerdictUnmanaged, "no CleanupPolicy selects the CSV: deleting it deletes nothing"
		return out, nil
	}
	in, err := r.classifyInput(ctx, csv)
	if err != nil {
		return nil, err
	}
	verdict := Classify(in)
	switch {
	case verdict.SkipReason == cleanupv1alpha1.ReasonReinstall:
		out.Verdict, out.Reason = VerdictSkipped, verdict.SkipReason
		out.Message = verdict.Message + "; the items are what the uninstall would do then"
	case verdict.SkipReason != "":
		out.Verdict, out.Reason, out.Message = VerdictSkipped, verdict.SkipReason, verdict.Message+": nothing would be deleted"
		return out, nil
	case hypothetical:
		out.Verdict, out.Message = VerdictUninstall, "the CSV is not being deleted; deleting it now would uninstall the operator"
	default:
		out.Verdict, out.Message = VerdictUninstall, verdict.Message
	}
	out.Policy = policy.Name

	u := &uninstall{csv: csv, settings: SettingsOf(policy), verdict: verdict, now: now}
	if err := r.planOperands(ctx, u, out); err != nil {
		var problem *Problem
		if errors.As(err, &problem) {
			out.Verdict, out.Reason, out.Message, out.Items = VerdictBlocked, problem.Reason, problem.Message, []DryRunItem{}
			return out, nil
		}
		return nil, err
	}
	if err := r.planClusterObjects(ctx, u, out); err != nil {
		return nil, err
	}
	r.planCRDs(u, out)
	return out, nil
}

// planOperands lists each instance of the owned CRDs with its fate.
func (r *Reconciler) planOperands(ctx context.Context, u *uninstall, out *DryRun) error {
	if problem, err := r.operatorGroupProblem(ctx, u.csv); err != nil || problem != nil {
		return errors.Join(err, asError(problem))
	}
	crds, err := r.ownedCRDs(ctx, u.csv)
	if err != nil {
		return err
	}
	others, err := r.otherOwners(ctx, u.csv)
	if err != nil {
		return err
	}
	scopes, problems := ScopeCRDs(ScopeInput{
		CSV: csvKey(u.csv), Owned: u.csv.Spec.CustomResourceDefinitions.Owned, CRDs: crds,
		CRDProvenance: u.settings.CRDProvenance, OtherOwners: others,
	})
	u.scopes = scopes
	// As the run (operandStep) decides: operands kept whole (opted out,
	// operands: Orphan) win over bad input, which then blocks nothing.
	orphan := r.orphanReason(u)
	if orphan == "" && len(problems) > 0 {
		return joinProblems(problems)
	}
	var targets NamespaceSet
	if orphan == "" {
		var problem *Problem
		if targets, problem, err = r.targetNamespaces(ctx, u.csv); err != nil || problem != nil {
			return errors.Join(err, asError(problem))
		}
	}
	for _, s := range scopes {
		if s.CRD == nil {
			continue
		}
		in := OperandInput{Scope: s, Targets: targets, DeletionTime: *u.csv.DeletionTimestamp}
		// A page at a time, as the run lists them: the plan holds its
		// items, never a second copy of every instance.
		err := r.forEachPage(ctx, s.GVR, s.CRD.Spec.Names.Kind, func(page []metav1.PartialObjectMetadata) error {
			for i := range page {
				out.Items = append(out.Items, planItem(in, s, orphan, &page[i]))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// planItem is one instance's fate in the plan.
func planItem(in OperandInput, s CRDScope, orphan string, item *metav1.PartialObjectMetadata) DryRunItem {
	it := DryRunItem{Action: ActionKeep, Kind: s.Kind, Namespace: item.Namespace, Name: item.Name}
	switch {
	case orphan != "":
		it.Reason = orphan
	case s.KeepReason != "":
		it.Reason = s.KeepReason
	default:
		it.Reason = keepReason(in, item)
	}
	if it.Reason == "" {
		it.Action, it.Reason = ActionDelete, DeleteOwnedOperand
		if item.DeletionTimestamp != nil {
			it.Reason = DeleteTerminating
		}
	}
	return it
}

// planClusterObjects lists the cluster RBAC and webhooks with the CSV's owner labels.
func (r *Reconciler) planClusterObjects(ctx context.Context, u *uninstall, out *DryRun) error {
	kinds := []struct {
		gvks   []schema.GroupVersionKind
		action cleanupv1alpha1.Action
	}{{rbac.ClusterRBACKinds, u.settings.ClusterRBAC}, {rbac.WebhookKinds, u.settings.Webhooks}}
	for _, k := range kinds {
		for _, gvk := range k.gvks {
			owned, err := rbac.ListOwned(ctx, r.APIReader, gvk, csvKey(u.csv))
			if err != nil {
				return err
			}
			for _, obj := range owned {
				it := DryRunItem{Action: ActionDelete, Kind: rbac.KindName(gvk), Name: obj.Name, Reason: DeleteOwnerLabels}
				if k.action != cleanupv1alpha1.Delete {
					it.Action, it.Reason = ActionKeep, cleanupv1alpha1.KeepPolicyOrphan
				}
				out.Items = append(out.Items, it)
			}
		}
	}
	return nil
}

// planCRDs says what happens to each owned CRD that exists: crdStep's decision.
func (r *Reconciler) planCRDs(u *uninstall, out *DryRun) {
	for _, s := range u.scopes {
		if s.CRD == nil {
			continue
		}
		it := DryRunItem{Action: ActionKeep, Kind: crdKind, Name: s.Name}
		switch {
		case u.settings.CRDs != cleanupv1alpha1.Delete:
			it.Reason = cleanupv1alpha1.KeepPolicyOrphan
		case crdKeepReason(s) != "":
			it.Reason = crdKeepReason(s)
		case keptInstances(out, s.Kind):
			it.Reason = cleanupv1alpha1.KeepHasInstances
		default:
			it.Action, it.Reason = ActionDelete, DeleteInstalledAlongside
		}
		out.Items = append(out.Items, it)
	}
}

// keptInstances reports whether the plan keeps any instance of the kind, which then keeps its CRD.
func keptInstances(out *DryRun, kind string) bool {
	for _, it := range out.Items {
		if it.Kind == kind && it.Action == ActionKeep {
			return true
		}
	}
	return false
}
