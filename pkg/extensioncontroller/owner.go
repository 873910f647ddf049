package extensioncontroller

import (
	"context"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
)

// owner is a deleting ClusterExtension as the engine knows it (cleanup.Hooks).
type owner struct {
	r   *Reconciler
	ext *ocv1.ClusterExtension
	// unavailable says why its operator is unavailable (Reconciler.operatorUnavailable).
	unavailable func(context.Context) (*decide.Problem, error)
}

var _ cleanup.Hooks = (*owner)(nil)

func (o *owner) Object() client.Object { return o.ext }

func (o *owner) Record() cleanup.RecordKind { return cleanup.Extensions }

func (o *owner) OperatorUnavailable(ctx context.Context) (*decide.Problem, error) {
	return o.unavailable(ctx)
}

// DeleteRefusingWebhooks deletes nothing: a ClusterExtension's webhook
// configurations go with it, by the garbage collector, once it is released.
func (o *owner) DeleteRefusingWebhooks(context.Context, []string) (int, error) { return 0, nil }

// Release removes csv-cleaner's finalizer from the extension; the garbage
// collector then removes what OLM v1 applied.
func (o *owner) Release(ctx context.Context) error {
	return o.r.patchFinalizers(ctx, o.ext, o.r.Finalizers.Remove)
}

// Plan is what the extension's uninstall deletes and keeps now, read live.
func (o *owner) Plan(ctx context.Context, now time.Time, depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	return planTo(ctx, o.r.APIReader, o.ext.Name, now, depth)
}
