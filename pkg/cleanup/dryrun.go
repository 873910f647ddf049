package cleanup

import (
	"context"
	"fmt"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Verdicts of a dry run.
const (
	VerdictUninstall = "Uninstall"
	VerdictSkipped   = "Skipped"
	VerdictUnmanaged = "Unmanaged"
	VerdictBlocked   = "Blocked"
	// VerdictIncomplete: the plan could not read some kinds (DryRun.Unread); nothing else blocks.
	VerdictIncomplete = "Incomplete"
)

// CSVRef names a CSV in the plan's JSON, with the keys in lower camel case as every other key.
type CSVRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is namespace/name.
func (c CSVRef) String() string { return types.NamespacedName(c).String() }

// DryRun is what an uninstall of a CSV, or of a ClusterExtension, would
// delete and keep, as the cluster is now.
type DryRun struct {
	CSV CSVRef `json:"csv,omitzero"`
	// ClusterExtension is the extension's name, for an extension's plan.
	ClusterExtension string `json:"clusterExtension,omitempty"`
	Policy           string `json:"policy,omitempty"`
	// Verdict is Uninstall, Skipped (with Reason), Unmanaged, Blocked (with
	// Reason), or Incomplete (some kinds could not be read: Unread).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	// Items are listed for an Uninstall, and for a Reinstall skip: what the
	// uninstall would do once the Subscription is deleted.
	Items []DryRunItem `json:"items"`
	// Refusals are what the run would be refused, per owned kind (Foresee).
	Refusals []Foreseen `json:"refusals,omitempty"`
	// Unread are the kinds whose instances the plan could not read, with why
	// and what the run does there.
	Unread []Unread `json:"unread,omitempty"`
	// Notes say what the plan could not foresee, and why.
	Notes []string `json:"notes,omitempty"`

	foresight *foresight
	// problems are what the run would be refused, found so far; they make the verdict Blocked (settle).
	problems []plan.Problem
	// accessDenied: csv-cleaner lacks a right on operands, so the run deletes nothing until it has it.
	accessDenied bool
	// verdictMessage is the verdict's message before settle.
	verdictMessage string
}

// DryRunItem is one object and what the uninstall would do with it: the
// item pkg/plan decides, which the uninstall carries out.
type DryRunItem = plan.Item

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
// right now, and why: it reads the cluster through the Gatherer the
// uninstall reads it through and prints the items of pkg/plan's decisions,
// which the uninstall carries out. It only reads. A CSV that is not being
// deleted is planned as if it were deleted now.
func PlanUninstall(ctx context.Context, reader client.Reader, key types.NamespacedName, now time.Time) (*DryRun, error) {
	g := Gatherer{Live: reader, Cached: reader}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := reader.Get(ctx, key, csv); err != nil {
		return nil, fmt.Errorf("getting CSV %s: %w", key, err)
	}
	out := &DryRun{CSV: CSVRef(key), Items: []DryRunItem{}}
	hypothetical := csv.DeletionTimestamp.IsZero()
	if hypothetical {
		csv.DeletionTimestamp = &metav1.Time{Time: now}
	}

	policy, err := g.Policy(ctx, csv)
	if err != nil {
		return nil, err
	}
	if policy == nil && !csv.IsCopied() {
		out.Verdict, out.Message = VerdictUnmanaged, "no CleanupPolicy selects the CSV: deleting it deletes nothing"
		return out, nil
	}
	in, err := g.Classify(ctx, csv)
	if err != nil {
		return nil, err
	}
	verdict := plan.Classify(in)
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

	settings := plan.SettingsOf(policy)
	operands, err := g.Operands(ctx, csv, verdict, settings)
	if err != nil {
		return nil, err
	}
	orphan, problem := plan.GateOperands(operands.Gate)
	if problem != nil {
		out.Verdict, out.Reason, out.Message = VerdictBlocked, problem.Reason, problem.Message
		return out, nil
	}
	decide := plan.OperandInput{Targets: operands.Targets, DeletionTime: *csv.DeletionTimestamp, Orphan: orphan,
		Timeout: plan.TimeoutOf(settings, csv.DeletionTimestamp.Time, now)}
	keptKinds, err := out.AddInstances(ctx, g, Instances{Subject: csv, Scopes: operands.Scopes, Decide: decide, Settings: settings,
		OperatorUnavailable: func(ctx context.Context) (*plan.Problem, error) { return g.OperatorUnavailable(ctx, csv) }})
	if err != nil {
		return nil, err
	}
	for _, gvk := range rbac.OwnedKinds() {
		owned, err := rbac.ListOwned(ctx, reader, gvk, csvKey(csv))
		if err != nil {
			return nil, err
		}
		for _, obj := range owned {
			it := plan.ClusterObjectFate(settings, rbac.KindName(gvk), rbac.IsWebhook(gvk))
			it.Name = obj.Name
			out.Items = append(out.Items, it)
		}
	}
	for _, s := range operands.Scopes {
		if s.CRD != nil {
			out.Items = append(out.Items, plan.CRDFate(settings, s, keptKinds[s.Kind]))
		}
	}
	return out, nil
}
