package undocontroller

import (
	"fmt"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// SetupIfServed registers the Undo controller when the API server serves
// Undos (their CRD is installed with csv-cleaner), and reports whether it did.
func SetupIfServed(mgr ctrl.Manager, recorder events.EventRecorder) (bool, error) {
	served, err := objects.Served(mgr.GetRESTMapper(), cleanupv1alpha1.GroupVersion.WithKind("Undo"))
	if err != nil || !served {
		return false, err
	}
	return true, Setup(mgr, recorder)
}

// Setup registers the Undo controller: Undos are read from the manager's
// cache; what an undo reads and writes, live, through a client of its own
// (an undo lists many kinds once: a cache of each would outlive it).
func Setup(mgr ctrl.Manager, recorder events.EventRecorder) error {
	live, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return fmt.Errorf("creating the undo's client: %w", err)
	}
	r := &Reconciler{Client: cleanup.Retry.Client(mgr.GetClient()), Live: cleanup.Retry.Client(live), Recorder: recorder}
	return ctrl.NewControllerManagedBy(mgr).
		Named("undo").
		// A change of an Undo's spec, not its status: the controller writes
		// the status and looks again when it says (a reconcile of its own
		// status write could act on an Undo its maker has just deleted).
		For(&cleanupv1alpha1.Undo{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, RateLimiter: cleanup.RateLimiter()}).
		Complete(r)
}
