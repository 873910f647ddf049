package envtest_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/faultproxy"
)

// behindProxy restarts csv-cleaner behind a fault proxy that degrades the
// API server at rates from its start (so that every watch it opens is cut
// too), and as usual again after the spec. The tests' own client talks to
// the API server directly.
func behindProxy(rates faultproxy.Rates) *faultproxy.Proxy {
	GinkgoHelper()
	seed := uint64(GinkgoRandomSeed())
	proxy, err := faultproxy.Start(cp.Config, seed)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("fault proxy %s, seed %d, rates %+v\n", proxy.Config.Host, seed, rates)
	proxy.SetRates(rates)
	stopManager()
	startManagerAs(proxy.Config)
	DeferCleanup(func() {
		stopManager()
		proxy.Close()
		GinkgoWriter.Printf("the fault proxy injected %v\n", proxy.Injected())
		startManager()
	})
	return proxy
}

// onPath matches the requests of method whose path holds every part.
func onPath(method string, parts ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.Method != method {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(r.URL.Path, p) {
				return false
			}
		}
		return true
	}
}

// degradedInstall is a scenario with a held operand (a-<id>/held, with a
// finalizer "the operator" removes), a free one (b-<id>/free), one outside
// the targets, owned cluster RBAC and an unrelated ClusterRole.
func degradedInstall(ctx context.Context, id string) *scenario {
	GinkgoHelper()
	s := newScenario(id)
	s.createPolicy(ctx)
	s.create(ctx)
	s.operand(ctx, 0, s.ns("a"), "held", holdFinalizer)
	s.operand(ctx, 0, s.ns("b"), "free")
	s.operand(ctx, 0, s.ns("outside"), "spared")
	s.ownedRBAC(ctx, "role")
	s.clusterRole(ctx, "unrelated", map[string]string{"app": "other"})
	return s
}

// releaseHeld is the operator finalizing its held operand.
func (s *scenario) releaseHeld(ctx context.Context) {
	GinkgoHelper()
	held := &unstructured.Unstructured{}
	held.SetGroupVersionKind(s.crd(0).GVK())
	held.SetNamespace(s.ns("a"))
	held.SetName("held")
	dropFinalizers(ctx, held)
}

// expectUninstalled checks what a user checks after a held install's uninstall.
func (s *scenario) expectUninstalled(ctx context.Context) {
	GinkgoHelper()
	Expect(s.remaining(ctx)).To(Equal([]string{
		"CRD " + s.crd(0).Name(), "ClusterRole " + s.id + "-unrelated", "Widget " + s.ns("outside") + "/spared",
	}), s.id)
	rec := s.record(ctx)
	Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted), s.id)
	Expect(count(rec, "Widget."+s.crd(0).Group)).To(Equal(cleanupv1alpha1.KindCount{
		Kind: "Widget." + s.crd(0).Group, Found: 2, Deleted: 2, Remaining: 0,
		Kept: []cleanupv1alpha1.KeptCount{{Reason: "OutsideTargets", Count: 1}},
	}), s.id)
	Expect(count(rec, "ClusterRole.rbac.authorization.k8s.io").Deleted).To(BeEquivalentTo(1), s.id)
	// client-go's event broadcaster sends an Event the API server refused again 10 s later.
	for _, reason := range []string{"CleanupStarted", "CleanupCompleted"} {
		Eventually(func(ctx context.Context) int { return s.eventCount(ctx, reason) }).WithContext(ctx).
			WithTimeout(time.Minute).Should(Equal(1), s.id+" "+reason)
	}
}

// completedWhileHeld watches the records of the scenarios and reports every
// record seen Completed while its CSV still had csv-cleaner's finalizer.
// Completed is written after the release, so a read of the CSV after the
// record's event sees the release. A watch that ends is opened again (its
// first events are the records as they are).
func completedWhileHeld(ctx context.Context, scenarios []*scenario) (stop func() (completed int, held []string)) {
	GinkgoHelper()
	c := cleanupClient()
	byName := map[string]*scenario{}
	for _, s := range scenarios {
		byName[s.install.CSVName] = s
	}
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		bad  []string
		done = make(chan struct{})
	)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for ctx.Err() == nil {
			w, err := c.Watch(ctx, &cleanupv1alpha1.CSVCleanupList{})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				rec, ok := ev.Object.(*cleanupv1alpha1.CSVCleanup)
				if !ok || ev.Type == watch.Deleted || byName[rec.Name] == nil || rec.Status.Phase != cleanupv1alpha1.PhaseCompleted {
					continue
				}
				csv := &operatorsv1alpha1.ClusterServiceVersion{}
				err := k8s.Get(ctx, byName[rec.Name].install.Key(), csv)
				held := err == nil && slices.Contains(csv.Finalizers, decide.DefaultFinalizer)
				mu.Lock()
				if held && !slices.Contains(bad, rec.Name) {
					bad = append(bad, rec.Name)
				}
				seen[rec.Name] = true
				mu.Unlock()
			}
			w.Stop()
		}
	}()
	return func() (int, []string) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return len(seen), bad
	}
}

// cleanupClient watches CSVCleanups directly on the API server.
func cleanupClient() client.WithWatch {
	GinkgoHelper()
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cleanup.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// failedAttempts reads csv_cleaner_failed_attempts_total of the CSV controller for step.
func failedAttempts(step string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "csv_cleaner_failed_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "controller") == "clusterserviceversion" && label(m, "step") == step {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// reconcileErrors reads controller-runtime's controller_runtime_reconcile_errors_total of controller.
func reconcileErrors(controller string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "controller") == controller {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

var _ = Describe("A degraded API server", func() {
	It("never stalls ten uninstalls with held operands, and no record says Completed before its CSV is released", func(ctx SpecContext) {
		var all []*scenario
		for _, id := range []string{"flt0", "flt1", "flt2", "flt3", "flt4", "flt5", "flt6", "flt7", "flt8", "flt9"} {
			all = append(all, degradedInstall(ctx, id))
		}
		By("starting csv-cleaner behind the fault proxy: its first start puts its finalizers on under the faults")
		// The watches are cut sooner than issue 26's 5 to 15 s: the ten
		// uninstalls take about that long, and every watch is to be cut at
		// least once while they run.
		rates := faultproxy.Degraded
		rates.CutWatchAfter = [2]time.Duration{2 * time.Second, 6 * time.Second}
		proxy := behindProxy(rates)
		for _, s := range all {
			s.waitFinalizer(ctx)
		}
		stop := completedWhileHeld(ctx, all)

		By("deleting the ten CSVs at once; the operator finalizes its held operands a few seconds later")
		// The proxy cuts csv-cleaner's watches: the deletion may be seen only
		// after a relist, whose version is not the deletion's, so an operand
		// of its second would be kept as of unknown age; this spec tests faults.
		all[len(all)-1].afterOperands()
		deleted := time.Now()
		for _, s := range all {
			csv, err := s.getCSV(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(k8s.Delete(ctx, csv)).To(Succeed())
		}
		time.Sleep(3 * time.Second)
		for _, s := range all {
			s.releaseHeld(ctx)
		}
		for _, s := range all {
			Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
				WithTimeout(3*time.Minute).Should(Satisfy(apierrors.IsNotFound), s.id)
			// The record says Completed once the release has succeeded: just after the CSV went.
			Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).Should(Equal("Completed/"), s.id)
		}
		GinkgoWriter.Printf("the ten uninstalls took %s under the faults (the held operands were released after 3 s)\n", time.Since(deleted).Round(100*time.Millisecond))
		proxy.SetRates(faultproxy.Rates{})
		Expect(proxy.Check(faultproxy.RandomKinds...)).To(Succeed())

		completed, held := stop()
		Expect(held).To(BeEmpty(), "records seen Completed while their CSV still had csv-cleaner's finalizer")
		Expect(completed).To(Equal(len(all)))
		for _, s := range all {
			s.expectUninstalled(ctx)
		}
	})

	DescribeTable("counts a write whose reply was lost once: Completed, one Event each",
		func(ctx SpecContext, id string, resource func(*scenario) string, fault faultproxy.Kind, times int) {
			s := degradedInstall(ctx, id)
			proxy := behindProxy(faultproxy.Rates{})
			s.waitFinalizer(ctx)
			proxy.Add(faultproxy.Rule{Match: onPath(http.MethodPatch, resource(s)), Fault: fault, Times: times})
			s.deleteCSV(ctx)
			s.releaseHeld(ctx)
			s.csvGone(ctx)
			Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).Should(Equal("Completed/"))
			Expect(proxy.Check(fault)).To(Succeed())
			Expect(proxy.Injected()[fault]).To(Equal(times))
			s.expectUninstalled(ctx)
		},
		Entry("the finalizer PATCH that releases the CSV (a reset stream)", "lostrel",
			func(s *scenario) string { return "/clusterserviceversions/" + s.install.CSVName }, faultproxy.LostReplyReset, 1),
		Entry("the record's first two status writes (500s)", "lostrec",
			func(s *scenario) string { return "/csvcleanups/" + s.install.CSVName + "/status" }, faultproxy.LostReply500, 2),
	)

	It("still counts what a pass deleted when its record write failed", func(ctx SpecContext) {
		s := degradedInstall(ctx, "lostcount")
		proxy := behindProxy(faultproxy.Rates{})
		s.waitFinalizer(ctx)
		By("refusing the record's status writes once the free operand was deleted, for two attempts")
		var mu sync.Mutex
		deleted := false
		freed, status := onPath(http.MethodDelete, "/"+s.ns("b")+"/", "/widgets/free"), onPath(http.MethodPatch, "/csvcleanups/"+s.install.CSVName+"/status")
		const refusals = 2 * 6 // two attempts' writes, each tried 6 times in place
		proxy.Add(faultproxy.Rule{Fault: faultproxy.Refused500, Times: refusals, Match: func(r *http.Request) bool {
			mu.Lock()
			defer mu.Unlock()
			deleted = deleted || freed(r)
			return deleted && status(r)
		}})
		s.deleteCSV(ctx)
		Eventually(func() int { return proxy.Injected()[faultproxy.Refused500] }).WithContext(ctx).Should(Equal(refusals))
		By("releasing the held operand: the next passes no longer find the free one")
		s.releaseHeld(ctx)
		s.csvGone(ctx)
		Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).Should(Equal("Completed/"))
		s.expectUninstalled(ctx)
	})

	It("shows failures that go on in the record, and clears them once an attempt succeeds", func(ctx SpecContext) {
		s := degradedInstall(ctx, "retrying")
		proxy := behindProxy(faultproxy.Rates{})
		s.waitFinalizer(ctx)
		before, beforeErrors := failedAttempts("operands"), reconcileErrors("clusterserviceversion")
		By("failing every list of the operator's operands with 500")
		lift := proxy.Add(faultproxy.Rule{Match: onPath(http.MethodGet, "/"+s.crd(0).Group+"/", "/widgets"), Fault: faultproxy.Refused500, Times: 1 << 30})
		s.deleteCSV(ctx)
		s.releaseHeld(ctx)
		Eventually(func(ctx context.Context) *metav1.Condition {
			rec := &cleanupv1alpha1.CSVCleanup{}
			if err := k8s.Get(ctx, s.install.Key(), rec); err != nil {
				return nil
			}
			return findCondition(rec, cleanupv1alpha1.ConditionRetrying)
		}).WithContext(ctx).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", And(ContainSubstring("attempts in a row failed, the last in step operands"),
				ContainSubstring("etcdserver: request timed out"), ContainSubstring("the next attempt is at")))))
		Expect(s.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
		Expect(s.eventCount(ctx, "Retrying")).To(Equal(1))
		Expect(failedAttempts("operands") - before).To(BeNumerically(">=", cleanup.RetryingAfter))
		Expect(reconcileErrors("clusterserviceversion")-beforeErrors).To(BeNumerically(">=", cleanup.RetryingAfter),
			"controller-runtime counts each failed attempt, where operators look")

		By("letting the lists through again")
		lift()
		s.csvGone(ctx)
		Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).Should(Equal("Completed/"))
		Expect(findCondition(s.record(ctx), cleanupv1alpha1.ConditionRetrying)).To(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "Succeeded")))
		Expect(s.eventCount(ctx, "Retrying")).To(Equal(1), "one Warning Event for the whole streak")
		s.expectUninstalled(ctx)
	})

	It("lets csv-cleaner release, on its own uninstall, every finalizer it placed within its timeout", func(ctx SpecContext) {
		var all []*scenario
		for _, id := range []string{"frel0", "frel1", "frel2", "frel3", "frel4"} {
			all = append(all, degradedInstall(ctx, id))
		}
		proxy := behindProxy(faultproxy.Degraded)
		for _, s := range all {
			s.waitFinalizer(ctx)
			waitRBACFinalizers(ctx, s.id+"-role", held)
		}
		stopManager()

		By("running the release through the fault proxy, as csv-cleaner release does")
		cfg := rest.CopyConfig(proxy.Config)
		cleanup.ClientConfig(cfg)
		c, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		c = cleanup.Retry.Client(c)
		releaseCtx, cancel := context.WithTimeout(ctx, owninstall.DefaultReleaseTimeout)
		defer cancel()
		rl := owninstall.Releaser{Live: c, Writer: c, Finalizers: decide.Finalizers{Current: decide.DefaultFinalizer, Legacy: []string{legacyFinalizer}},
			Hold: rbac.HoldFinalizer, Workers: 8, Reporter: "test"}
		released, err := rl.ReleaseOthers(releaseCtx)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(released)).To(BeNumerically(">=", 3*len(all)))
		Expect(proxy.Check(faultproxy.Refused500, faultproxy.Refused503, faultproxy.Refused429, faultproxy.LostReply500, faultproxy.LostReplyReset)).To(Succeed())
		for _, s := range all {
			Expect(s.finalizers(ctx)).NotTo(ContainElement(decide.DefaultFinalizer), s.id)
			Expect(rbacFinalizers(ctx, s.id+"-role")).To(Equal([][]string{{}, {}}), s.id)
		}
	})
})

func findCondition(rec *cleanupv1alpha1.CSVCleanup, typ string) *metav1.Condition {
	return meta.FindStatusCondition(rec.Status.Conditions, typ)
}
