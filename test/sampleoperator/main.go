package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Finalizer is the sample operator's finalizer on its instances.
const Finalizer = "sample.e2e.csv-cleaner.io/cleanup"

func main() {
	var group, kind, namespaces, serviceAccount string
	flag.StringVar(&group, "group", "", "API group of the kind the operator manages (version v1).")
	flag.StringVar(&kind, "kind", "", "Kind the operator manages.")
	flag.StringVar(&namespaces, "namespaces", "", "Comma-separated namespaces to watch; empty watches all.")
	flag.StringVar(&serviceAccount, "as-service-account", "", "namespace/name of the ServiceAccount to act as (impersonation).")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(group, kind, namespaces, serviceAccount); err != nil {
		ctrl.Log.Error(err, "Sample operator stopped")
		os.Exit(1)
	}
}

func run(group, kind, namespaces, serviceAccount string) error {
	if group == "" || kind == "" {
		return fmt.Errorf("--group and --kind are required")
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	if serviceAccount != "" {
		ns, name, ok := strings.Cut(serviceAccount, "/")
		if !ok {
			return fmt.Errorf("--as-service-account %q: want namespace/name", serviceAccount)
		}
		cfg.Impersonate.UserName = "system:serviceaccount:" + ns + ":" + name
		cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	cfg.QPS, cfg.Burst = 50, 100
	cacheOpts := cache.Options{}
	if namespaces != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(namespaces, ",") {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cacheOpts, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	r := &reconciler{Client: mgr.GetClient(), gvk: gvk}
	if err := ctrl.NewControllerManagedBy(mgr).For(obj).Named("sample").Complete(r); err != nil {
		return fmt.Errorf("creating the controller: %w", err)
	}
	ctrl.Log.Info("Starting the sample operator", "kind", gvk.String(), "namespaces", namespaces, "serviceAccount", serviceAccount)
	return mgr.Start(ctrl.SetupSignalHandler())
}

type reconciler struct {
	client.Client
	gvk schema.GroupVersionKind
}

// Reconcile adds the finalizer to live instances and removes it from
// deleted ones (the cleanup of external state takes no time here).
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.gvk)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := obj.DeepCopy()
	deleting := !obj.GetDeletionTimestamp().IsZero()
	switch {
	case deleting && controllerutil.RemoveFinalizer(obj, Finalizer):
		log.Info("Removing the finalizer of a deleted instance", "object", klog.KObj(obj))
	case !deleting && controllerutil.AddFinalizer(obj, Finalizer):
		log.Info("Adding the finalizer", "object", klog.KObj(obj))
	default:
		return ctrl.Result{}, nil
	}
	err := r.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsForbidden(err) {
		log.Error(err, "The API server refused the finalizer change", "object", klog.KObj(obj))
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}
