package main

import (
	"context"
	"crypto/tls"
	"flag"
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
	"github.com/csv-cleaner/csv-cleaner/pkg/extension"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

var version = "dev"

// Authentication and authorization of the metrics endpoint's clients
// (controller-runtime's filters.WithAuthenticationAndAuthorization).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The leader election lease, and the Events about it, in csv-cleaner's own
// namespace only (the Role is put there by kustomize).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=csv-cleaner
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=csv-cleaner

const rootUsage = `csv-cleaner makes the uninstall of an operator installed by OLM (a
ClusterServiceVersion, or an OLM v1 ClusterExtension) complete, safe and
resumable: it deletes the operator's custom resources, cluster RBAC and
webhooks as its CleanupPolicy says, and releases its finalizer last.

Usage:
  csv-cleaner [flags]            Run the controller (in the cluster, or against $KUBECONFIG's).
  csv-cleaner plan ...           Print what an uninstall of a CSV or a ClusterExtension would delete and keep, and what the API server would refuse; writes nothing.
  csv-cleaner release [flags]    Remove every finalizer csv-cleaner placed, once it is gone.
  csv-cleaner version            Print the version.

Run 'csv-cleaner plan -h' or 'csv-cleaner release -h' for a subcommand's flags.

Flags of the controller:
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "plan":
			os.Exit(planCommand(os.Args[2:], os.Stdout, os.Stderr))
		case "release":
			os.Exit(releaseCommand(os.Args[2:], os.Stdout, os.Stderr))
		case "version":
			fmt.Println(version)
			return
		}
	}
	var (
		metricsAddr, probeAddr, leaderNS string
		pprofAddr                        string
		leaderElect, secureMetrics       bool
		finalizer                        string
		legacy                           stringList
		qps                              float64
		burst, workers, deleteWorkers    int
		lease                            leaseTimes
		rbacHold, paceWrites             bool
		holdFinalizer                    string
		releaseTimeout                   time.Duration
		operandRole                      string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS to clients that authenticate with a token and may get /metrics (a SubjectAccessReview); false serves plain HTTP to anyone.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the health probes bind to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "Address Go's pprof profiles are served on, for profiling; 0 (the default) disables them.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so that only one replica acts at a time.")
	flag.StringVar(&leaderNS, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "Namespace of the leader election lease; defaults to the pod's namespace.")
	flag.DurationVar(&lease.duration, "leader-election-lease-duration", 15*time.Second, "How long a standby waits before it takes over a lease its leader stopped renewing.")
	flag.DurationVar(&lease.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew its lease before it gives up leadership.")
	flag.DurationVar(&lease.retryPeriod, "leader-election-retry-period", 2*time.Second, "How often candidates try to acquire or renew the lease.")
	flag.StringVar(&finalizer, "finalizer", plan.DefaultFinalizer, "Finalizer csv-cleaner puts on managed CSVs; give two instances different names.")
	flag.Var(&legacy, "legacy-finalizer", "An earlier finalizer name of csv-cleaner's (repeatable): replaced on live CSVs, counted as ours on deleting ones.")
	flag.BoolVar(&rbacHold, "rbac-hold", true, "Keep a managed operator's ClusterRoles and bindings in force until its operands are gone.")
	flag.StringVar(&holdFinalizer, "rbac-hold-finalizer", rbac.HoldFinalizer, "Finalizer that holds the cluster RBAC; give two instances different names.")
	flag.Float64Var(&qps, "kube-api-qps", cleanup.DefaultQPS, "Requests per second csv-cleaner's client may send to the API server.")
	flag.IntVar(&burst, "kube-api-burst", cleanup.DefaultBurst, "Burst of requests csv-cleaner's client may send to the API server.")
	flag.IntVar(&workers, "max-concurrent-reconciles", 4, "CSVs reconciled at once.")
	flag.BoolVar(&paceWrites, "pace-writes", true, "Pace the finalizer and RBAC-hold patches of managed CSVs (thousands at a first start) by the API server's latency, up to 3 × --max-concurrent-reconciles in flight, so that other clients are not queued behind them.")
	flag.IntVar(&deleteWorkers, "delete-workers", cleanup.DefaultDeleteWorkers, "Delete requests in flight at once for one uninstall (within the client's rate limit), and finalizer patches in flight when csv-cleaner releases everything.")
	flag.DurationVar(&releaseTimeout, "release-timeout", cleanup.DefaultReleaseTimeout, "On SIGTERM while csv-cleaner is being uninstalled (its namespace terminating, or its CSV deleted with no CSV replacing it), how long it may take to remove every finalizer it placed; keep it below the pod's terminationGracePeriodSeconds.")
	flag.StringVar(&operandRole, "operand-role", rbac.OperandRole, "Aggregated ClusterRole that grants csv-cleaner its rights on operands, which it binds to its own identity at start; empty binds nothing.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Usage = func() { _, _ = fmt.Fprint(flag.CommandLine.Output(), rootUsage); flag.PrintDefaults() }
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	if err := run(options{
		metricsAddr: metricsAddr, secureMetrics: secureMetrics, probeAddr: probeAddr, pprofAddr: pprofAddr, leaderElect: leaderElect, leaderNS: leaderNS,
		finalizers: plan.Finalizers{Current: finalizer, Legacy: legacy},
		rbacHold:   holdFinalizer, noRBACHold: !rbacHold,
		qps: float32(qps), burst: burst, workers: workers, deleteWorkers: deleteWorkers, lease: lease,
		releaseTimeout: releaseTimeout, operandRole: operandRole, paceWrites: paceWrites,
	}); err != nil {
		log.Error(err, "csv-cleaner stopped")
		os.Exit(1)
	}
}

type options struct {
	metricsAddr, probeAddr, leaderNS string
	pprofAddr                        string
	leaderElect, secureMetrics       bool
	finalizers                       plan.Finalizers
	qps                              float32
	burst, workers, deleteWorkers    int
	lease                            leaseTimes
	rbacHold                         string
	noRBACHold                       bool
	releaseTimeout                   time.Duration
	operandRole                      string
	paceWrites                       bool
}

type leaseTimes struct{ duration, renewDeadline, retryPeriod time.Duration }

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.qps, o.burst
	cfg.UserAgent = "csv-cleaner/" + version
	cleanup.ClientConfig(cfg)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        cleanup.Scheme(),
		Cache:                         cleanup.CacheOptions(),
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
	setup := cleanup.SetupOptions{
		Finalizers: o.finalizers, MaxConcurrentReconciles: o.workers, DeleteWorkers: o.deleteWorkers,
		RBACHold: o.rbacHold, DisableRBACHold: o.noRBACHold,
		// OLM sets OPERATOR_CONDITION_NAME, the CSV's name, in the pods of
		// every operator it installs; the namespace comes from the Downward API.
		Self:        types.NamespacedName{Namespace: os.Getenv("POD_NAMESPACE"), Name: os.Getenv("OPERATOR_CONDITION_NAME")},
		Namespace:   os.Getenv("POD_NAMESPACE"),
		OperandRole: o.operandRole,
		PaceWrites:  o.paceWrites,
	}
	shared, err := cleanup.Setup(mgr, setup)
	if err != nil {
		return err
	}
	olmv1, err := extension.SetupIfServed(mgr, shared, o.workers)
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
	if err := cleanup.ReleaseOnExit(logr.NewContext(ctx, ctrl.Log.WithName("exit")), cleanup.Retry.Client(live), setup); err != nil {
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
