package csvcontroller

import (
	"context"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// owner is a deleting CSV as the engine knows it (cleanup.Hooks).
type owner struct {
	r   *Reconciler
	csv *operatorsv1alpha1.ClusterServiceVersion
}

var _ cleanup.Hooks = (*owner)(nil)

func (o *owner) Object() client.Object { return o.csv }

func (o *owner) Record() cleanup.RecordKind { return cleanup.CSVs }

func (o *owner) OperatorUnavailable(ctx context.Context) (*decide.Problem, error) {
	return o.r.gather().OperatorUnavailable(ctx, o.csv)
}

// Release lets the CSV go: the hold on its cluster RBAC (released already
// when its steps ran), then csv-cleaner's finalizer.
func (o *owner) Release(ctx context.Context) error {
	if err := o.r.releaseRBAC(ctx, objects.Key(o.csv)); err != nil {
		return err
	}
	return o.r.patchFinalizers(ctx, o.csv, o.r.Finalizers.Remove)
}

// Plan is what the CSV's uninstall deletes and keeps now, read live.
func (o *owner) Plan(ctx context.Context, now time.Time, depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	return planUninstall(ctx, o.r.APIReader, objects.Key(o.csv), now, depth)
}
