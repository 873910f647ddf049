// Package envtest_test proves csv-cleaner's rules against a real
// kube-apiserver, etcd and kube-controller-manager, with the controller
// running in this process so that it can be stopped and started at will.
package envtest_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/manager"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

const legacyFinalizer = "csv-cleaner.io/legacy-uninstall"

var (
	cp  *controlplane.ControlPlane
	k8s client.Client
	// disc tells the kinds the API server serves, for csv-cleaner plan's dependents.
	disc discovery.DiscoveryInterface
	// running is the manager under test, nil while it is stopped ("scaled to zero").
	running *runningManager
)

type runningManager struct {
	cancel context.CancelFunc
	done   chan error
}

func TestEnvtest(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	// Without this, Eventually(...).WithContext(ctx) waits for the spec's context
	// alone, and a wait that never succeeds hangs until the suite times out.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "csv-cleaner envtest suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	cp, err = controlplane.Start(controlplane.Options{ControllerManager: true, OLMv1: true})
	Expect(err).NotTo(HaveOccurred())
	// The tests' own client must not be throttled by client-go's default of 5 requests a second.
	testCfg := rest.CopyConfig(cp.Config)
	testCfg.QPS, testCfg.Burst = 200, 400
	k8s, err = client.New(testCfg, client.Options{Scheme: cleanup.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	disc, err = discovery.NewDiscoveryClientForConfig(testCfg)
	Expect(err).NotTo(HaveOccurred())
	startManager()
})

// A spec that failed while csv-cleaner was stopped must not leave it stopped for the next.
var _ = AfterEach(func() {
	if running == nil {
		startManager()
	}
})

var _ = AfterSuite(func() {
	stopManager()
	if cp != nil {
		Expect(cp.Stop()).To(Succeed())
	}
})

// startManager starts csv-cleaner's controllers in this process, as the binary wires them, as an admin.
func startManager() {
	GinkgoHelper()
	startManagerAs(cp.Config)
}

// startManagerAs starts the controllers with the given identity, and the
// options as the binary sets them unless mutate changes them.
//
// It and stopManager are not Ginkgo helpers: a failure in them names their
// own line, which is all a CI summary keeps of it.
func startManagerAs(identity *rest.Config, mutate ...func(*manager.SetupOptions)) {
	Expect(running).To(BeNil(), "the manager is already running")
	// The binary's default client rate limits.
	cfg := rest.CopyConfig(identity)
	cfg.QPS, cfg.Burst = 50, 100
	cleanup.ClientConfig(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 cleanup.Scheme(),
		Cache:                  manager.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred(), "creating the manager")
	opts := manager.SetupOptions{
		Finalizers:    decide.Finalizers{Current: decide.DefaultFinalizer, Legacy: []string{legacyFinalizer}},
		DeleteWorkers: 8, MaxConcurrentReconciles: 4, PaceWrites: true,
		// The CLI's command line is cmd/csv-cleaner's (its own test reads it
		// back; the end-to-end tests run the binary): here, a mark of the owner.
		UndoCommand: func(o decide.Owner) string { return "undo-of " + o.String() },
	}
	for _, m := range mutate {
		m(&opts)
	}
	served, err := manager.Setup(mgr, opts)
	Expect(err).To(Succeed(), "setting up the controllers")
	Expect(served).To(BeTrue(), "the suite's control plane serves ClusterExtensions")
	ctx, cancel := context.WithCancel(context.Background())
	m := &runningManager{cancel: cancel, done: make(chan error, 1)}
	before := csvReconciles()
	go func() {
		defer GinkgoRecover()
		m.done <- mgr.Start(ctx)
	}()
	running = m
	watchingCSVs(before)
}

// watchingCSVs waits, when there are CSVs, until the CSV controller has
// reconciled one since before: its watch's handler is then registered, so
// that it sees a CSV's deletion begin (the manager's cache can say it has
// synced before the controller has asked it for the CSVs' informer).
func watchingCSVs(before float64) {
	csvs := &metav1.PartialObjectMetadataList{}
	csvs.SetGroupVersionKind(operatorsv1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersionList"))
	notCopied, err := labels.Parse("!" + operatorsv1alpha1.CopiedLabelKey) // copies are not watched
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.List(context.Background(), csvs, client.MatchingLabelsSelector{Selector: notCopied}, client.Limit(1))).To(Succeed())
	if len(csvs.Items) == 0 {
		return
	}
	Eventually(csvReconciles).Should(BeNumerically(">", before), "the CSV controller reconciles the CSVs it lists at its start")
}

// csvReconciles counts the CSV controller's reconciles in this process.
func csvReconciles() float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "controller") == "clusterserviceversion" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// stopManager stops the controllers and waits until they have stopped: scale to zero.
func stopManager() {
	if running == nil {
		return
	}
	running.cancel()
	// Longer than the manager's own graceful shutdown (30 s), so that a
	// manager that overran it fails with its error, not with this wait.
	Eventually(running.done).WithTimeout(45*time.Second).Should(Receive(BeNil()), "the manager stops without an error")
	running = nil
}

// restartManagerWith restarts the controllers with changed options, and
// with the usual ones again after the spec.
func restartManagerWith(mutate func(*manager.SetupOptions)) {
	GinkgoHelper()
	stopManager()
	startManagerAs(cp.Config, mutate)
	DeferCleanup(func() {
		stopManager()
		startManager()
	})
}

// whileStopped runs the spec body's next part with csv-cleaner scaled to
// zero and makes sure it runs again after the spec.
func scaleToZero() {
	GinkgoHelper()
	stopManager()
	DeferCleanup(func() {
		if running == nil {
			startManager()
		}
	})
}
