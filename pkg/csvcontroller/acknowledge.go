package csvcontroller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// acknowledger creates an uninstall's CSVCleanup record (phase Deleting) and
// its CleanupStarted Event the moment the CSV's deletion is seen, in a
// controller of its own so that a burst is acknowledged at once. It deletes
// nothing; the uninstall finds the record started.
type acknowledger struct{ r *Reconciler }

// AcknowledgeWorkers is how many deleting CSVs the acknowledger reads at once.
const AcknowledgeWorkers = 32

// deletionStarted lets through the CSV events that show a deletion: a CSV
// created or listed while being deleted, and the update that sets its
// deletionTimestamp.
var deletionStarted = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !e.Object.GetDeletionTimestamp().IsZero() },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero() && e.ObjectOld.GetDeletionTimestamp().IsZero()
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func (a acknowledger) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("uninstall-acknowledge").
		For(objects.CSVMetadata(), builder.WithPredicates(deletionStarted)).
		WithOptions(controller.Options{MaxConcurrentReconciles: AcknowledgeWorkers, RateLimiter: cleanup.RateLimiter()}).
		Complete(a)
}

// Reconcile acknowledges one deleting CSV; anything it cannot do is the
// uninstall controller's, which does it too, so an error is only logged.
func (a acknowledger) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r := a.r
	cached := objects.CSVMetadata()
	if err := r.Client.Get(ctx, req.NamespacedName, cached); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cached.DeletionTimestamp.IsZero() || !r.Finalizers.HeldBy(cached.Finalizers) || r.Life.IsOwnCSV(cached) {
		return reconcile.Result{}, nil
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("csv", klog.KObj(cached))
	ctx = logr.NewContext(ctx, log)
	if err := r.acknowledge(ctx, cached); err != nil {
		log.V(1).Info("Leaving the acknowledgement to the uninstall", "error", err.Error())
	}
	return reconcile.Result{}, nil
}

// acknowledge starts the record of a managed CSV's uninstall, unless it is
// started already, in as few requests as it can: the live list of the CSVs
// of its namespace holds the CSV itself and its siblings, the namespace is
// read from the cache, and the record is created before it is read.
func (r *Reconciler) acknowledge(ctx context.Context, cached client.Object) error {
	if fate, _, err := r.Life.Fate(ctx); err != nil || fate == decide.SelfUninstalled {
		return err // csv-cleaner is going: it releases every CSV instead
	}
	g := r.gather()
	policy, err := g.Policy(ctx, cached)
	if err != nil || !decide.Managed(policy, cached) {
		return err
	}
	in, err := g.classifyListed(ctx, cached)
	if err != nil || in.CSV == nil {
		return err
	}
	csv := in.CSV
	if csv.DeletionTimestamp.IsZero() || !r.Finalizers.HeldBy(csv.Finalizers) {
		return nil
	}
	verdict := decide.Classify(in)
	if verdict.SkipReason != "" {
		return nil
	}
	settings := decide.SettingsOf(policy)
	u, err := r.Open(ctx, &owner{r: r, csv: csv}, settings, time.Now(), true)
	if err != nil {
		return err
	}
	return u.Start(ctx, started(csv, policy.Name, settings, verdict))
}

// started is what a CSV's uninstall says as it starts.
func started(csv *operatorsv1alpha1.ClusterServiceVersion, policy string, s decide.Settings, v decide.Verdict) cleanup.Start {
	return cleanup.Start{Policy: policy, Why: v.Message, About: aboutToDo(csv, s, v),
		UninstallMessage: csv.Annotations[objects.UninstallMessageAnnotation]}
}

// aboutToDo says, for a person, what an uninstall under the settings does:
// the operands of which kinds it deletes or keeps, and what becomes of the
// cluster RBAC, the webhooks and the CRDs.
func aboutToDo(csv *operatorsv1alpha1.ClusterServiceVersion, s decide.Settings, v decide.Verdict) string {
	var kinds []string
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		kinds = append(kinds, o.Name)
	}
	operands := "deleting the operands in its target namespaces"
	if orphan := decide.OrphanReason(v, s); orphan != "" {
		operands = "keeping every operand (" + orphan + ")"
	}
	what := fmt.Sprintf("%s of %d owned CRDs (%s)", operands, len(kinds), strings.Join(kinds, ", "))
	act := func(a cleanupv1alpha1.Action) string {
		if a == cleanupv1alpha1.Delete {
			return "deleting"
		}
		return "keeping"
	}
	return fmt.Sprintf("%s, then %s its cluster RBAC, %s its webhook configurations and %s its CRDs",
		what, act(s.ClusterRBAC), act(s.Webhooks), act(s.CRDs))
}
