package manager

import (
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/extensioncontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/undocontroller"
)

// SetupOptions configure csv-cleaner's controllers.
type SetupOptions struct {
	Finalizers              decide.Finalizers
	MaxConcurrentReconciles int
	DeleteWorkers           int
	// RBACHold is the finalizer that holds managed CSVs' cluster RBAC (rbac.HoldFinalizer by default).
	RBACHold string
	// DisableRBACHold turns the hold off (and releases holds placed before).
	DisableRBACHold bool
	// Self is csv-cleaner's own CSV, if OLM installed it.
	Self types.NamespacedName
	// Namespace is csv-cleaner's own namespace (POD_NAMESPACE); its deletion
	// is csv-cleaner's uninstall.
	Namespace string
	// OperandRole is the aggregated ClusterRole that grants csv-cleaner its
	// rights on operands (rbac.OperandRole in the shipped manifests), which
	// csv-cleaner binds to itself at start; "" binds nothing (its identity
	// has those rights some other way).
	OperandRole string
	// PaceWrites paces the finalizer and hold patches of managed CSVs by the
	// API server's latency (pkg/throttle), up to 3 × MaxConcurrentReconciles in
	// flight; off, they go as fast as the reconciles send them.
	PaceWrites bool
	// UndoCommand is how a person undoes an uninstall (the command line of
	// `csv-cleaner undo`, which cmd/csv-cleaner owns): the messages of an
	// uninstall under a backup say it.
	UndoCommand func(decide.Owner) string
}

// Install is csv-cleaner's own install as the options give it: what its
// own uninstall, in a reconcile or on SIGTERM (self.ReleaseOnExit), releases.
func (o SetupOptions) Install() owninstall.Install {
	finalizers := o.Finalizers
	if finalizers.Current == "" {
		finalizers.Current = decide.DefaultFinalizer
	}
	// The hold's name stays when the hold is off: releasing the holds
	// placed before takes off that name, not the default.
	return owninstall.Install{Self: o.Self, Namespace: o.Namespace, Finalizers: finalizers,
		Hold: rbac.HoldName(o.RBACHold), Workers: max(1, o.DeleteWorkers)}
}

// Setup registers csv-cleaner's controllers on one engine: the CSV
// controller, and the ClusterExtension controller when the API server serves
// ClusterExtensions, which it reports. It binds csv-cleaner's operand role at
// start.
func Setup(mgr ctrl.Manager, o SetupOptions) (clusterExtensions bool, _ error) {
	install := o.Install()
	engine, err := cleanup.New(mgr, install.Finalizers, o.DeleteWorkers)
	if err == nil {
		engine.UndoCommand = o.UndoCommand
	}
	if err != nil {
		return false, err
	}
	life := &owninstall.Life{Install: install, Cached: engine.Client, Live: engine.APIReader, Writer: engine.Client}
	if _, err := csvcontroller.Setup(mgr, engine, life, csvcontroller.Options{Workers: o.MaxConcurrentReconciles, RBACHold: o.RBACHold,
		DisableRBACHold: o.DisableRBACHold, PaceWrites: o.PaceWrites}); err != nil {
		return false, err
	}
	served, err := extensioncontroller.SetupIfServed(mgr, engine, life, o.MaxConcurrentReconciles)
	if err != nil {
		return false, err
	}
	if undos, err := undocontroller.SetupIfServed(mgr, engine.Recorder); err != nil {
		return false, err
	} else if !undos {
		mgr.GetLogger().Info("Not running Undos: the API server does not serve them (their CRD, cleanup.csv-cleaner.io_undos, is not installed)")
	}
	if o.OperandRole != "" {
		binding := owninstall.OperandBinding{
			Binder:   rbac.OperandBinder{Live: engine.APIReader, Writer: engine.Client, Role: o.OperandRole, Self: o.Self},
			Reviews:  engine.Client,
			Log:      mgr.GetLogger().WithName("operand-binding"),
			RetryCap: cleanup.MaxRetryDelay,
		}
		if err := mgr.Add(binding); err != nil {
			return false, fmt.Errorf("adding the operand role's binding: %w", err)
		}
	}
	warmRESTMapper(mgr)
	return served, nil
}

// CacheOptions are the manager's cache: the CSV controller's (csv.CacheOptions).
func CacheOptions() cache.Options { return csvcontroller.CacheOptions() }

// warmRESTMapper maps now the kinds an uninstall reads live. The RESTMapper
// discovers an API group the first time a client uses it, which cost the
// first uninstall a second in the benchmark (test/bench). A kind that cannot
// be mapped yet (OLM not installed) is mapped when it is first used.
func warmRESTMapper(mgr ctrl.Manager) {
	kinds := []schema.GroupVersionKind{
		operatorsv1alpha1.SchemeGroupVersion.WithKind("Subscription"),
		operatorsv1.SchemeGroupVersion.WithKind("OperatorGroup"),
		cleanupv1alpha1.GroupVersion.WithKind("CSVCleanup"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
		apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		rbac.ValidatingWebhookConfiguration, rbac.MutatingWebhookConfiguration,
	}
	for _, gvk := range kinds {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			mgr.GetLogger().V(1).Info("Not mapping a kind ahead of its first use", "kind", gvk.String(), "error", err.Error())
		}
	}
}
