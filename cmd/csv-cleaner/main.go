package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/manager"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
)

// The build, stamped by the Makefile's -ldflags -X (make build, make dist,
// the Dockerfile): the version, the commit it was built from and the
// commit's date (reproducible: the same source gives the same binary).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// Authentication and authorization of the metrics endpoint's clients
// (controller-runtime's filters.WithAuthenticationAndAuthorization).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The leader election lease, and the Events about it, in csv-cleaner's own
// namespace only (the Role is put there by kustomize).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=csv-cleaner
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=csv-cleaner

func main() {
	os.Exit(execute(os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
}

// options are the controller's flags (controllerFlags).
type options struct {
	metricsAddr, probeAddr, leaderNS string
	pprofAddr                        string
	leaderElect, secureMetrics       bool
	finalizers                       decide.Finalizers
	qps                              float64
	burst, workers, deleteWorkers    int
	lease                            leaseTimes
	rbacHold                         string
	rbacHoldOn                       bool
	releaseTimeout                   time.Duration
	operandRole                      string
	paceWrites                       bool
	zap                              zap.Options
}

type leaseTimes struct{ duration, renewDeadline, retryPeriod time.Duration }

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	cfg.UserAgent = "csv-cleaner/" + version
	cleanup.ClientConfig(cfg)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        cleanup.Scheme(),
		Cache:                         manager.CacheOptions(),
		Metrics:                       metricsOptions(o),
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "csv-cleaner.cleanup.csv-cleaner.io",
		LeaderElectionNamespace:       o.leaderNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.lease.duration,
		RenewDeadline:                 &o.lease.renewDeadline,
		RetryPeriod:                   &o.lease.retryPeriod,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	setup := manager.SetupOptions{
		Finalizers: o.finalizers, MaxConcurrentReconciles: o.workers, DeleteWorkers: o.deleteWorkers,
		RBACHold: o.rbacHold, DisableRBACHold: !o.rbacHoldOn,
		// OLM sets OPERATOR_CONDITION_NAME, the CSV's name, in the pods of
		// every operator it installs; the namespace comes from the Downward API.
		Self:        types.NamespacedName{Namespace: os.Getenv("POD_NAMESPACE"), Name: os.Getenv("OPERATOR_CONDITION_NAME")},
		Namespace:   os.Getenv("POD_NAMESPACE"),
		OperandRole: o.operandRole,
		PaceWrites:  o.paceWrites,
		UndoCommand: undoCommandLine,
	}
	olmv1, err := manager.Setup(mgr, setup)
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	log.Info("Starting csv-cleaner", "version", version, "finalizer", o.finalizers.Current, "legacyFinalizers", o.finalizers.Legacy,
		"rbacHold", o.rbacHold, "leaderElection", o.leaderElect, "clusterExtensions", olmv1)
	signalled := ctrl.SetupSignalHandler()
	if err := mgr.Start(signalled); err != nil {
		return err
	}
	// Stopped by SIGTERM: the rest of the grace period is for csv-cleaner's own uninstall, if it is one.
	ctx, cancel := context.WithTimeout(context.Background(), o.releaseTimeout)
	defer cancel()
	live, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
	if err != nil {
		return fmt.Errorf("creating the client for the release on exit: %w", err)
	}
	if err := owninstall.ReleaseOnExit(logr.NewContext(ctx, ctrl.Log.WithName("exit")), cleanup.Retry.Client(live), setup.Install()); err != nil {
		return fmt.Errorf("releasing csv-cleaner's finalizers on exit (run csv-cleaner release to finish): %w", err)
	}
	return nil
}

// metricsOptions serves metrics as kubebuilder's scaffold does: over HTTPS
// (a self-signed certificate controller-runtime makes at start), only to
// clients whose token the API server accepts and who may get /metrics
// (ClusterRole csv-cleaner-metrics-reader), and over HTTP/1.1 only, which
// keeps the HTTP/2 stream attacks (CVE-2023-44487, CVE-2023-39325) away.
func metricsOptions(o options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.secureMetrics {
		m.SecureServing = true
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		m.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return m
}
