package csv

import (
	"context"
	"errors"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// reconcileDelete is one pass of a deleting CSV's uninstall, a straight
// line: read the CSV live (a pass while its Backup runs stops there:
// Engine.WaitingOnBackup), open its record, classify the deletion (a copy,
// an upgrade or a reinstall is released at once, Skipped), start the
// record, run the steps (the backup gate, operands, cluster RBAC and
// webhooks, CRDs), then release the CSV, last. The record says Releasing before the finalizer's
// removal and Completed only once it has succeeded.
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
	now := time.Now()
	var settings plan.Settings
	if policy != nil {
		settings = plan.SettingsOf(policy)
	}
	if policy != nil {
		if requeue, waiting := r.WaitingOnBackup(ctx, cleanup.CSVs, csv, settings); waiting {
			return ctrl.Result{RequeueAfter: requeue}, nil
		}
	}
	o := &owner{r: r, csv: csv}
	u, err := r.Open(ctx, o, settings, now, false)
	if err != nil {
		return ctrl.Result{}, err
	}

	// An upgrade is an upgrade whether a policy selects the CSV or not (an
	// earlier csv-cleaner's own CSV, which no policy needs to select, is one).
	in, err := r.gather().Classify(ctx, csv)
	if err != nil {
		return ctrl.Result{}, cleanup.InStep("classify", err)
	}
	verdict := plan.Classify(in)
	switch {
	case verdict.SkipReason != "":
		return ctrl.Result{}, u.Skip(ctx, verdict.SkipReason, verdict.Message)
	case policy == nil:
		return ctrl.Result{}, u.Skip(ctx, cleanupv1alpha1.ReasonUnmanaged, "no CleanupPolicy selects the CSV any more; nothing was deleted")
	}
	// The phase is written before anything is deleted (unless the
	// acknowledgement has written it already): an uninstall shows Deleting,
	// and what it is about to do, from its start.
	if err := u.Start(ctx, started(csv, policy.Name, settings, verdict)); err != nil {
		return ctrl.Result{}, err
	}
	proceed, res, err := u.Run(ctx,
		u.BackupStep(),
		cleanup.Step{Name: "operands", Run: func(ctx context.Context) (bool, error) { return r.operandStep(ctx, u, csv, verdict) }},
		cleanup.Step{Name: "cluster RBAC and webhooks", Label: "clusterObjects", Run: func(ctx context.Context) (bool, error) { return r.clusterObjectStep(ctx, u, csv) }},
		cleanup.Step{Name: "CRDs", Label: "crds", Run: func(ctx context.Context) (bool, error) { return r.crdStep(ctx, u) }},
	)
	if !proceed {
		return res, err
	}
	return ctrl.Result{}, u.Release(ctx, "Everything the policy asked for is done; removing csv-cleaner's finalizer from the CSV",
		"Everything the policy asked for is done; the CSV is released")
}
