package csvcontroller

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/throttle"
)

// Options configure the CSV controller.
type Options struct {
	// Workers is how many CSVs are reconciled at once.
	Workers int
	// RBACHold is the finalizer that holds managed CSVs' cluster RBAC (rbac.HoldName).
	RBACHold string
	// DisableRBACHold turns the hold off (and releases holds placed before).
	DisableRBACHold bool
	// PaceWrites paces the finalizer and hold patches of managed CSVs by the
	// API server's latency (pkg/throttle), up to 3 × Workers in flight; off,
	// they go as fast as the reconciles send them.
	PaceWrites bool
}

// Setup registers the CSV controller on the engine, with the
// acknowledgement of deletions and the CleanupPolicy status controller, on
// a manager whose cache was built with CacheOptions.
func Setup(mgr ctrl.Manager, e *cleanup.Engine, life *owninstall.Life, o Options) (*Reconciler, error) {
	r := &Reconciler{
		Engine:      e,
		Life:        life,
		RBACHold:    rbac.HoldName(o.RBACHold),
		RBACHoldOff: o.DisableRBACHold,
		written:     &finalizer.Written{},
	}
	if o.PaceWrites {
		// Each managing reconcile sends up to 3 patches at once (ensureManaged).
		r.pacer = throttle.NewLimiter(throttle.DefaultConfig(3 * max(1, o.Workers)))
	}
	cleanup.ReportPace(r.pacer)
	for _, gvk := range rbac.HeldKinds {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), objects.Metadata(gvk), rbac.OwnerIndex, rbac.OwnerIndexValue); err != nil {
			return nil, fmt.Errorf("indexing %s by owner CSV: %w", rbac.KindName(gvk), err)
		}
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: max(1, o.Workers), RateLimiter: cleanup.RateLimiter()}); err != nil {
		return nil, fmt.Errorf("setting up the CSV controller: %w", err)
	}
	if err := (acknowledger{r: r}).setup(mgr); err != nil {
		return nil, fmt.Errorf("setting up the uninstall acknowledgement: %w", err)
	}
	if err := (&PolicyStatusReconciler{Client: e.Client}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the CleanupPolicy status controller: %w", err)
	}
	return r, nil
}
