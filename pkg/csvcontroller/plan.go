package csvcontroller

import (
	"context"
	"fmt"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// PlanUninstall reports what an uninstall of the CSV would delete and keep
// right now, and why: it reads the cluster through the Gatherer the
// uninstall reads it through and prints the items of pkg/decide's decisions,
// which the uninstall carries out. It only reads. A CSV that is not being
// deleted is planned as if it were deleted now.
func PlanUninstall(ctx context.Context, reader client.Reader, key types.NamespacedName, now time.Time) (*dryrun.DryRun, error) {
	return planUninstall(ctx, reader, key, now, dryrun.PlanAll)
}

// planUninstall is PlanUninstall read to depth.
func planUninstall(ctx context.Context, reader client.Reader, key types.NamespacedName, now time.Time, depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	g := gatherer{instances.Gatherer{Live: reader, Cached: reader}}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := reader.Get(ctx, key, csv); err != nil {
		return nil, fmt.Errorf("getting CSV %s: %w", key, err)
	}
	out := &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindCSV, Namespace: key.Namespace, Name: key.Name}, Items: []dryrun.DryRunItem{},
		UninstallMessage: csv.Annotations[objects.UninstallMessageAnnotation]}
	hypothetical := csv.DeletionTimestamp.IsZero()
	if hypothetical {
		csv.DeletionTimestamp = &metav1.Time{Time: now}
	}

	policy, err := g.Policy(ctx, csv)
	if err != nil {
		return nil, err
	}
	managed := policy != nil || csv.IsCopied() // a copy is classified as one
	var verdict decide.Verdict
	if managed {
		in, err := g.Classify(ctx, csv)
		if err != nil {
			return nil, err
		}
		verdict = decide.Classify(in)
	}
	v := decide.JudgePlan(decide.PlanVerdictInput{Managed: managed, Unmanaged: "no CleanupPolicy selects the CSV: deleting it deletes nothing",
		SkipReason: verdict.SkipReason, Message: verdict.Message, NothingDeleted: ": nothing would be deleted",
		Hypothetical: hypothetical, WhatIf: "the CSV is not being deleted; deleting it now would uninstall the operator"})
	if out.Judged(v) {
		return out, nil
	}
	out.Policy = policy.Name

	settings := decide.SettingsOf(policy)
	out.PlanBackup(decide.KindCSV, csv, settings)
	operands, err := g.Operands(ctx, csv, verdict, settings)
	if err != nil {
		return nil, err
	}
	orphan, problem := decide.GateOperands(operands.Gate)
	if problem != nil {
		out.Verdict, out.Reason, out.Message = decide.VerdictBlocked, problem.Reason, problem.Message
		return out, nil
	}
	operandInput := decide.OperandInput{Targets: operands.Targets, DeletionTime: *csv.DeletionTimestamp, Orphan: orphan,
		Timeout: decide.TimeoutOf(settings, csv.DeletionTimestamp.Time, now)}
	keptKinds, err := out.AddInstances(ctx, g.Gatherer, dryrun.Instances{Subject: csv, Scopes: operands.Scopes, Decide: operandInput, Settings: settings,
		OperatorUnavailable: func(ctx context.Context) (*decide.Problem, error) { return g.OperatorUnavailable(ctx, csv) }, Depth: depth})
	if err != nil {
		return nil, err
	}
	for _, gvk := range rbac.OwnedKinds() {
		owned, err := rbac.ListOwned(ctx, reader, gvk, objects.Key(csv))
		if err != nil {
			return nil, err
		}
		for _, obj := range owned {
			out.Items = append(out.Items, decide.ClusterObjectItem(settings, rbac.KindName(gvk), rbac.IsWebhook(gvk), obj.Name, !obj.DeletionTimestamp.IsZero()))
		}
	}
	for _, s := range operands.Scopes {
		if s.CRD != nil {
			out.Items = append(out.Items, decide.CRDFate(settings, s, keptKinds[s.Kind]))
		}
	}
	return out, nil
}
