package csvcontroller

import (
	"context"
	"errors"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// reconcileDelete is a deleting CSV's branch: a CSV csv-cleaner released
// already has its record completed; one it holds, read live, has one pass
// of its uninstall run by the engine (cleanup.Engine.Uninstall).
func (r *Reconciler) reconcileDelete(ctx context.Context, cached client.Object, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	if !r.Finalizers.HeldBy(cached.GetFinalizers()) {
		return ctrl.Result{}, errors.Join(cleanup.InStep("release", r.releaseRBAC(ctx, objects.Key(cached))),
			r.FinishRelease(ctx, cleanup.CSVs, objects.Key(cached), cached))
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), csv); err != nil {
		return ctrl.Result{}, cleanup.InStep("read", client.IgnoreNotFound(err))
	}
	if !r.Finalizers.HeldBy(csv.Finalizers) || csv.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	return r.Uninstall(ctx, &pass{owner: owner{r: r, csv: csv}}, policy)
}

// pass is one pass of a CSV's uninstall: what the engine asks of the CSV's side.
type pass struct {
	owner
	in      decide.ClassifyInput
	verdict decide.Verdict
}

var _ cleanup.Pass = (*pass)(nil)

// Read reads the CSV's siblings, Subscriptions and namespace, live.
func (p *pass) Read(ctx context.Context) (err error) {
	p.in, err = p.r.gather().Classify(ctx, p.csv)
	return err
}

// Classify tells a copy, an upgrade or a reinstall (released at once,
// Skipped) from an uninstall, whether a policy selects the CSV or not (an
// earlier csv-cleaner's own CSV, which no policy needs to select, is an
// upgrade).
func (p *pass) Classify(_ context.Context, u *cleanup.Uninstall) (cleanup.Verdict, error) {
	p.verdict = decide.Classify(p.in)
	return cleanup.Verdict{SkipReason: p.verdict.SkipReason, Message: p.verdict.Message,
		Start: started(p.csv, "", u.Settings(), p.verdict)}, nil
}

// Steps are the console plugins, the operands, the cluster RBAC and webhooks, and the CRDs.
func (p *pass) Steps(u *cleanup.Uninstall) []cleanup.Step {
	r, csv := p.r, p.csv
	return []cleanup.Step{
		{Name: "console plugins", Label: "consolePlugins", Run: func(ctx context.Context) (bool, error) { return r.consolePluginStep(ctx, u, csv) }},
		{Name: "operands", Run: func(ctx context.Context) (bool, error) { return r.operandStep(ctx, u, csv, p.verdict) }},
		{Name: "cluster RBAC and webhooks", Label: "clusterObjects", Run: func(ctx context.Context) (bool, error) { return r.clusterObjectStep(ctx, u, csv) }},
		{Name: "CRDs", Label: "crds", Run: func(ctx context.Context) (bool, error) { return r.crdStep(ctx, u) }},
	}
}

// Released says what the CSV's release does.
func (p *pass) Released() (releasing, completed string) {
	return "Everything the policy asked for is done; removing csv-cleaner's finalizer from the CSV",
		"Everything the policy asked for is done; the CSV is released"
}
