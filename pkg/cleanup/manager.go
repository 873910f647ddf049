package cleanup

import (
	"context"
	"fmt"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/pace"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Scheme knows the types csv-cleaner reads and writes: Kubernetes' own, CRDs, OLM's (v0 and v1) and its own.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	utilruntime.Must(cleanupv1alpha1.AddToScheme(s))
	utilruntime.Must(ocv1.AddToScheme(s))
	return s
}

// Defaults of csv-cleaner's client and delete concurrency, which the
// benchmarks (test/bench) measure; flags change them.
const (
	// DefaultQPS and DefaultBurst are the client's rate limit.
	DefaultQPS   = 1000
	DefaultBurst = 2000
	// DefaultDeleteWorkers is how many deletes one uninstall has in flight.
	DefaultDeleteWorkers = 16
	// DefaultReleaseTimeout bounds the release on SIGTERM during csv-cleaner's
	// own uninstall (ReleaseOnExit): 10 s inside the grace period the
	// manifests ship (terminationGracePeriodSeconds), sized in make bench.
	DefaultReleaseTimeout = 50 * time.Second
)

// SetupOptions configure the controllers.
type SetupOptions struct {
	Finalizers              plan.Finalizers
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
	// API server's latency (pkg/pace), up to 3 × MaxConcurrentReconciles in
	// flight; off, they go as fast as the reconciles send them.
	PaceWrites bool
}

// withDefaults fills in the default finalizer names.
func (o SetupOptions) withDefaults() SetupOptions {
	if o.Finalizers.Current == "" {
		o.Finalizers.Current = plan.DefaultFinalizer
	}
	// The finalizer's name stays when the hold is off: releasing the holds
	// placed before takes off that name, not the default.
	o.RBACHold = holdToRelease(o.RBACHold)
	return o
}

// ClientConfig prepares the config of csv-cleaner's manager: its requests
// are counted while the API server has them (InstrumentClient), an
// uninstall's deletes hold its slots meanwhile (holdSlot), its background
// writes are paced by the API server's latency (pace.Transport), and its reads, discovery, the REST
// mapper's and the informers' lists included, are retried in place while
// the API server fails transiently (Retry.Transport), each try counted.
func ClientConfig(cfg *rest.Config) {
	cfg.Wrap(InstrumentClient) // innermost: it counts what the API server has
	cfg.Wrap(holdSlot)
	cfg.Wrap(pace.Transport) // each try of a background write is paced (ensureManaged)
	cfg.Wrap(Retry.Transport)
}

// Setup registers csv-cleaner's controllers with a manager built with
// Scheme() and CacheOptions() from a config ClientConfig prepared. It
// returns the CSV's controller, whose records, deletes, Events and metrics
// the ClusterExtension's controller (pkg/extension) shares.
func Setup(mgr ctrl.Manager, o SetupOptions) (*Reconciler, error) {
	o = o.withDefaults()
	meta, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client: %w", err)
	}
	// Every write is retried in place while it fails transiently (Retry),
	// and every read by the transport ClientConfig gave the manager.
	c, live := Retry.Client(mgr.GetClient()), mgr.GetAPIReader()
	recorder, err := newEventRecorder(mgr)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		Client:        c,
		Metadata:      meta,
		APIReader:     live,
		Recorder:      recorder,
		Finalizers:    o.Finalizers,
		DeleteWorkers: max(1, o.DeleteWorkers),
		RBACHold:      o.RBACHold,
		RBACHoldOff:   o.DisableRBACHold,
		Self:          o.Self,
		Namespace:     o.Namespace,
		written:       &finalizer.Written{},
		failures:      failureBackoff(),
	}
	if o.PaceWrites {
		// Each managing reconcile sends up to 3 patches at once (ensureManaged).
		r.pacer = pace.NewLimiter(pace.DefaultConfig(3 * max(1, o.MaxConcurrentReconciles)))
	}
	writePace.Store(r.pacer)
	for _, gvk := range rbac.HeldKinds {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), heldMetadata(gvk), rbac.OwnerIndex, rbac.OwnerIndexValue); err != nil {
			return nil, fmt.Errorf("indexing %s by owner CSV: %w", rbac.KindName(gvk), err)
		}
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: max(1, o.MaxConcurrentReconciles), RateLimiter: RateLimiter()}); err != nil {
		return nil, fmt.Errorf("setting up the CSV controller: %w", err)
	}
	if err := (acknowledger{r: r}).setup(mgr); err != nil {
		return nil, fmt.Errorf("setting up the uninstall acknowledgement: %w", err)
	}
	if err := (&PolicyStatusReconciler{Client: c}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the CleanupPolicy status controller: %w", err)
	}
	if o.OperandRole != "" {
		binding := operandBinding{
			binder:  rbac.OperandBinder{Live: live, Writer: c, Role: o.OperandRole, Self: o.Self},
			reviews: c,
			log:     mgr.GetLogger().WithName("operand-binding"),
		}
		if err := mgr.Add(binding); err != nil {
			return nil, fmt.Errorf("adding the operand role's binding: %w", err)
		}
	}
	warmRESTMapper(mgr)
	return r, nil
}

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
