package extensioncontroller

import (
	"context"
	"fmt"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
)

// Plan reports what an uninstall of the ClusterExtension would delete and
// keep now, and why, reading as the uninstall does; an extension that is not
// being deleted is planned as if deleted now. What the garbage collector
// removes after the release is not listed.
func Plan(ctx context.Context, reader client.Reader, name string, now time.Time) (*dryrun.DryRun, error) {
	return planTo(ctx, reader, name, now, dryrun.PlanAll)
}

// planTo is Plan read to depth.
func planTo(ctx context.Context, reader client.Reader, name string, now time.Time, depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	ext := &ocv1.ClusterExtension{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, ext); err != nil {
		return nil, fmt.Errorf("getting ClusterExtension %s: %w", name, err)
	}
	out := &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindExtension, Name: name}, Items: []dryrun.DryRunItem{}}
	hypothetical := ext.DeletionTimestamp.IsZero()
	if hypothetical {
		ext.DeletionTimestamp = &metav1.Time{Time: now}
	}
	policy, err := policyOf(ctx, reader, ext)
	if err != nil {
		return nil, err
	}
	verdict := olmv1.ClassifyExtension(ext.Finalizers)
	v := decide.JudgePlan(decide.PlanVerdictInput{Managed: policy != nil,
		Unmanaged:  "no CleanupPolicy selects the ClusterExtension: deleting it leaves everything to the garbage collector, which deletes its CRDs with every custom resource",
		SkipReason: verdict.SkipReason, Message: verdict.Message,
		Hypothetical: hypothetical, WhatIf: "the ClusterExtension is not being deleted; deleting it now (background cascade) would uninstall the operator"})
	if out.Judged(v) {
		return out, nil
	}
	out.Policy = policy.Name
	settings := decide.SettingsOf(policy)
	out.PlanBackup(decide.KindExtension, ext, settings)
	in, err := (&Reconciler{Engine: &cleanup.Engine{APIReader: reader}}).gather(ctx, ext)
	if err != nil {
		return nil, err
	}
	targets, targetsProblem := olmv1.ExtensionTargets(ext, settings)
	orphan := ""
	switch {
	case len(in.problems) > 0:
		out.Verdict, out.Reason, out.Message = decide.VerdictBlocked, in.problems[0].Reason, in.problems[0].Message
		return out, nil
	case settings.Operands == cleanupv1alpha1.Orphan:
		orphan = cleanupv1alpha1.KeepPolicyOrphan
	case targetsProblem != nil:
		out.Verdict, out.Reason, out.Message = decide.VerdictBlocked, targetsProblem.Reason, targetsProblem.Message
		return out, nil
	}
	g := instances.Gatherer{Live: reader, Cached: reader}
	operandInput := decide.OperandInput{Targets: targets, DeletionTime: *ext.DeletionTimestamp, Orphan: orphan,
		Timeout: decide.TimeoutOf(settings, ext.DeletionTimestamp.Time, now)}
	keptKinds, err := out.AddInstances(ctx, g, dryrun.Instances{Subject: ext, Scopes: in.scopes, Decide: operandInput, Settings: settings,
		OperatorUnavailable: (&Reconciler{Engine: &cleanup.Engine{APIReader: reader}}).operatorUnavailable(ext, in.sets), Depth: depth})
	if err != nil {
		return nil, err
	}
	for _, s := range in.scopes {
		out.Items = append(out.Items, olmv1.ExtensionCRDFate(settings, s, keptKinds[s.Kind]))
	}
	return out, nil
}
