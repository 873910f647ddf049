package cleanup

import (
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Scheme knows the types csv-cleaner reads and writes: Kubernetes' own, CRDs, OLM's and its own.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	utilruntime.Must(cleanupv1alpha1.AddToScheme(s))
	return s
}

// SetupOptions configure the controllers.
type SetupOptions struct {
	Finalizers              Finalizers
	MaxConcurrentReconciles int
	DeleteWorkers           int
	// RBACHold is the finalizer that holds managed CSVs' cluster RBAC (rbac.HoldFinalizer by default).
	RBACHold string
	// DisableRBACHold turns the hold off (and releases holds placed before).
	DisableRBACHold bool
	// Self is csv-cleaner's own CSV, if OLM installed it.
	Self types.NamespacedName
}

// Setup registers csv-cleaner's controllers with a manager built with
// Scheme() and CacheOptions().
func Setup(mgr ctrl.Manager, o SetupOptions) error {
	if o.Finalizers.Current == "" {
		o.Finalizers.Current = DefaultFinalizer
	}
	if o.RBACHold == "" {
		o.RBACHold = rbac.HoldFinalizer
	}
	if o.DisableRBACHold {
		o.RBACHold = ""
	}
	r := &Reconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("csv-cleaner"),
		Finalizers:    o.Finalizers,
		DeleteWorkers: max(1, o.DeleteWorkers),
		RBACHold:      o.RBACHold,
		Self:          o.Self,
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: max(1, o.MaxConcurrentReconciles)}); err != nil {
		return fmt.Errorf("setting up the CSV controller: %w", err)
	}
	if err := (&PolicyStatusReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the CleanupPolicy status controller: %w", err)
	}
	return nil
}
