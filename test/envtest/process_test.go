package envtest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// The csv-cleaner binary, built once for the specs that run it as a process.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// cleanerBinary builds csv-cleaner from this checkout, once.
func cleanerBinary(ctx context.Context) string {
	GinkgoHelper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "csv-cleaner-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "csv-cleaner")
		build := exec.CommandContext(ctx, "go", "build", "-o", binPath, "./cmd/csv-cleaner")
		build.Dir = controlplane.RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building csv-cleaner: %w\n%s", err, out)
		}
	})
	Expect(binErr).NotTo(HaveOccurred())
	return binPath
}

// cleanerProc is one csv-cleaner replica as OLM runs it from its bundle:
// its own process, with leader election in its namespace, and the pod
// environment OLM sets (POD_NAMESPACE, OPERATOR_CONDITION_NAME).
type cleanerProc struct {
	*controlplane.Process
	metrics, probe string
}

// startCleaner starts a replica of csv-cleaner's CSV csv and waits until it is ready.
func startCleaner(ctx context.Context, name string, csv types.NamespacedName) *cleanerProc {
	GinkgoHelper()
	return startCleanerOn(ctx, name, csv, cp.Kubeconfig)
}

// startCleanerOn is startCleaner with the kubeconfig at kubeconfig (a fault proxy's).
func startCleanerOn(ctx context.Context, name string, csv types.NamespacedName, kubeconfig string) *cleanerProc {
	GinkgoHelper()
	bin := cleanerBinary(ctx)
	p := &cleanerProc{}
	p.metrics, p.probe = freeAddrs()
	var err error
	p.Process, err = controlplane.StartProcess(name, bin, []string{
		"--kubeconfig=" + kubeconfig, "--metrics-bind-address=" + p.metrics, "--metrics-secure=false", "--health-probe-bind-address=" + p.probe,
		"--leader-elect", "--leader-election-namespace=" + csv.Namespace,
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
		"--operand-role=", // an admin: no operand role to bind
	}, []string{"POD_NAMESPACE=" + csv.Namespace, "OPERATOR_CONDITION_NAME=" + csv.Name}, cp.LogDir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Kill)
	Eventually(func(ctx context.Context) (int, error) {
		if p.Exited() {
			return 0, StopTrying(name + " exited; see its log in " + cp.LogDir)
		}
		code, _, err := controlplane.HTTPGet(ctx, "http://"+p.probe+"/readyz")
		return code, err
	}).WithContext(ctx).Should(Equal(http.StatusOK))
	return p
}

// leads reports whether the replica holds the leader election lease.
func (p *cleanerProc) leads(ctx context.Context) bool {
	code, body, err := controlplane.HTTPGet(ctx, "http://"+p.metrics+"/metrics")
	return err == nil && code == http.StatusOK &&
		slices.Contains(strings.Split(body, "\n"), `leader_election_master_status{name="csv-cleaner.cleanup.csv-cleaner.io"} 1`)
}

// waitLeads waits until p leads.
func (p *cleanerProc) waitLeads(ctx context.Context) {
	GinkgoHelper()
	Eventually(p.leads).WithContext(ctx).Should(BeTrue(), p.Name+" takes the lease")
}

// selfCSV creates a CSV of csv-cleaner's own, in phase Succeeded, with a
// ClusterRole and binding that carry its three owner labels (as OLM makes
// them from the bundle's clusterPermissions); replaces names the version it
// replaces. The namespace is created when needed.
func selfCSV(ctx context.Context, key types.NamespacedName, replaces string) {
	GinkgoHelper()
	in := fixtures.Install{Namespace: key.Namespace, CSVName: key.Name, Targets: []string{""}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(key.Namespace)))).To(Succeed())
	csv := in.CSV()
	csv.Spec.Replaces = replaces
	Expect(k8s.Create(ctx, csv)).To(Succeed())
	setCSVPhase(ctx, key, operatorsv1alpha1.CSVPhaseSucceeded, operatorsv1alpha1.CSVReasonInstallSuccessful)
	Expect(k8s.Create(ctx, fixtures.OwnedClusterRole(selfRBACName(key), key))).To(Succeed())
	Expect(k8s.Create(ctx, fixtures.OwnedClusterRoleBinding(selfRBACName(key), key))).To(Succeed())
}

func selfRBACName(key types.NamespacedName) string { return key.Namespace + "-" + key.Name }

// setCSVPhase sets a CSV's status phase and reason, as OLM does.
func setCSVPhase(ctx context.Context, key types.NamespacedName, phase operatorsv1alpha1.ClusterServiceVersionPhase, reason operatorsv1alpha1.ConditionReason) {
	GinkgoHelper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	Expect(k8s.Get(ctx, key, csv)).To(Succeed())
	base := csv.DeepCopy()
	csv.Status.Phase, csv.Status.Reason = phase, reason
	Expect(k8s.Status().Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
}

// upgradeSelf does to csv-cleaner's own CSV old what OLM does in an
// upgrade once the new CSV has succeeded: phase Replacing, then Deleting,
// then it deletes it.
func upgradeSelf(ctx context.Context, old types.NamespacedName) {
	GinkgoHelper()
	setCSVPhase(ctx, old, operatorsv1alpha1.CSVPhaseReplacing, operatorsv1alpha1.CSVReasonBeingReplaced)
	setCSVPhase(ctx, old, operatorsv1alpha1.CSVPhaseDeleting, operatorsv1alpha1.CSVReasonReplaced)
	Expect(k8s.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name}})).To(Succeed())
}

// csvFinalizers are a CSV's finalizers, or ["gone"].
func csvFinalizers(ctx context.Context, key types.NamespacedName) []string {
	csv := &metav1.PartialObjectMetadata{}
	csv.SetGroupVersionKind(csvGVK)
	if err := k8s.Get(ctx, key, csv); apierrors.IsNotFound(err) {
		return []string{"gone"}
	} else if err != nil {
		return []string{err.Error()}
	}
	return csv.Finalizers
}

var csvGVK = operatorsv1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersion")

// version is one version of an object that a watch delivered.
type version struct {
	kind, name string
	finalizers []string
	at         time.Time
}

// versionLog records every version a watch delivers of CSVs, ClusterRoles and bindings.
type versionLog struct {
	mu   sync.Mutex
	seen []version
}

// watchVersions starts watches on CSVs, ClusterRoles and bindings that
// record every version until the spec ends.
func watchVersions(ctx context.Context) *versionLog {
	GinkgoHelper()
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cleanup.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	log := &versionLog{}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	for _, gvk := range []schema.GroupVersionKind{csvGVK, rbac.ClusterRole, rbac.ClusterRoleBinding} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		w, err := wc.Watch(wctx, list)
		Expect(err).NotTo(HaveOccurred())
		go func() {
			defer GinkgoRecover()
			defer w.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if o, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
						log.mu.Lock()
						log.seen = append(log.seen, version{kind: gvk.Kind, name: client.ObjectKeyFromObject(o).String(),
							finalizers: o.Finalizers, at: time.Now()})
						log.mu.Unlock()
					}
				}
			}
		}()
	}
	return log
}

// without lists the versions of kind/name seen before until that lacked finalizer.
func (l *versionLog) without(kind, name, finalizer string, until time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, v := range l.seen {
		if v.kind == kind && v.name == name && v.at.Before(until) && !slices.Contains(v.finalizers, finalizer) {
			out = append(out, fmt.Sprintf("%s %s at %s: %v", v.kind, v.name, v.at.Format("15:04:05.000"), v.finalizers))
		}
	}
	return out
}

// count is how many versions of kind/name were seen.
func (l *versionLog) count(kind, name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, v := range l.seen {
		if v.kind == kind && v.name == name {
			n++
		}
	}
	return n
}

// keptHeld asserts that every version seen before until of the scenario's
// CSV and of its RBAC called <id>-role carried csv-cleaner's finalizers.
func (l *versionLog) keptHeld(s *scenario, until time.Time) {
	GinkgoHelper()
	role := s.id + "-role"
	Expect(l.count("ClusterServiceVersion", s.install.Key().String())).To(BeNumerically(">", 0), "the watch saw the CSV")
	Expect(l.without("ClusterServiceVersion", s.install.Key().String(), decide.DefaultFinalizer, until)).To(BeEmpty())
	Expect(l.without("ClusterRole", role, rbac.HoldFinalizer, until)).To(BeEmpty())
	Expect(l.without("ClusterRoleBinding", role, rbac.HoldFinalizer, until)).To(BeEmpty())
}

// shippedGracePeriod is the terminationGracePeriodSeconds of the Deployment
// that make deploy and the bundle ship.
func shippedGracePeriod() time.Duration {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "manager", "manager.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dep := &appsv1.Deployment{}
	Expect(yaml.Unmarshal(raw, dep)).To(Succeed())
	Expect(dep.Spec.Template.Spec.TerminationGracePeriodSeconds).NotTo(BeNil())
	return time.Duration(*dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
}

// heldAnywhere lists every CSV, ClusterRole and binding in the cluster
// that carries a finalizer of csv-cleaner's.
func heldAnywhere(ctx context.Context) []string {
	GinkgoHelper()
	var out []string
	for _, k := range []struct {
		gvk schema.GroupVersionKind
		fin string
	}{{csvGVK, decide.DefaultFinalizer}, {rbac.ClusterRole, rbac.HoldFinalizer}, {rbac.ClusterRoleBinding, rbac.HoldFinalizer}} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		Expect(k8s.List(ctx, list)).To(Succeed())
		for _, o := range list.Items {
			if slices.Contains(o.Finalizers, k.fin) {
				out = append(out, k.gvk.Kind+" "+path(o.Namespace, o.Name))
			}
		}
	}
	return out
}

// inFlight makes an uninstall that waits: the scenario's CSV deleted while
// its operand carries a finalizer that only the test removes.
func inFlight(ctx context.Context, id string) (*scenario, func(context.Context)) {
	GinkgoHelper()
	s := newScenario(id)
	s.createPolicy(ctx)
	s.create(ctx)
	w := s.operand(ctx, 0, s.ns("a"), "w1", operandHold)
	s.ownedRBAC(ctx, "role")
	release := func(ctx context.Context) {
		GinkgoHelper()
		Eventually(func(ctx context.Context) error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return client.IgnoreNotFound(err)
			}
			w.SetFinalizers(nil)
			return k8s.Update(ctx, w)
		}).WithContext(ctx).Should(Succeed())
	}
	DeferCleanup(release)
	return s, release
}

// waitInFlight waits until the scenario's record shows its uninstall waiting on its one operand.
func waitInFlight(ctx context.Context, s *scenario) {
	GinkgoHelper()
	Eventually(func(g Gomega, ctx context.Context) {
		rec := &cleanupv1alpha1.CSVCleanup{}
		g.Expect(k8s.Get(ctx, s.install.Key(), rec)).To(Succeed())
		g.Expect(rec.Status.Remaining).To(BeEquivalentTo(1))
	}).WithContext(ctx).Should(Succeed())
}

// installed makes an operator install that stays installed.
func installed(ctx context.Context, id string) *scenario {
	GinkgoHelper()
	s := newScenario(id)
	s.createPolicy(ctx)
	s.create(ctx)
	s.ownedRBAC(ctx, "role")
	return s
}

var _ = Describe("csv-cleaner's own life cycle, run as OLM runs it", func() {
	// The in-process csv-cleaner of the other specs would be a third replica.
	BeforeEach(scaleToZero)

	// upgrade runs csv-cleaner v1, holding an uninstall in flight and an
	// installed operator, and upgrades it to v2 the way OLM does; newLeads
	// says which version leads while both run, sameDeployment that the
	// upgrade is a rollout of one Deployment (v1 stops before v2 starts).
	upgrade := func(ctx context.Context, id string, newLeads, sameDeployment bool) {
		GinkgoHelper()
		v1 := types.NamespacedName{Namespace: "cc-" + id, Name: "csv-cleaner.v0.1.0"}
		v2 := types.NamespacedName{Namespace: v1.Namespace, Name: "csv-cleaner.v0.2.0"}
		selfCSV(ctx, v1, "")
		busy, releaseOperand := inFlight(ctx, id+"-busy")
		live := installed(ctx, id+"-live")

		By("running v1, which holds both operators and its own CSV and RBAC")
		old := startCleaner(ctx, id+"-v1-a", v1)
		old.waitLeads(ctx)
		busy.waitFinalizer(ctx)
		live.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, live.id+"-role", held)
		waitRBACFinalizers(ctx, busy.id+"-role", held)
		Eventually(func(ctx context.Context) []string { return csvFinalizers(ctx, v1) }).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))
		waitRBACFinalizers(ctx, selfRBACName(v1), held)
		versions := watchVersions(ctx)

		By("deleting an operator whose operand waits on its finalizer: an uninstall in flight")
		busy.deleteCSV(ctx)
		waitInFlight(ctx, busy)

		By("creating v2, which replaces v1, and running it beside v1")
		selfCSV(ctx, v2, v1.Name)
		var replicas []*cleanerProc
		switch {
		case sameDeployment:
			Expect(old.Stop(30*time.Second)).To(Succeed(), "v1's CSV is not deleted yet: it stops at once")
			replicas = []*cleanerProc{startCleaner(ctx, id+"-v2-a", v2)}
			replicas[0].waitLeads(ctx)
		case newLeads:
			standby := startCleaner(ctx, id+"-v2-a", v2)
			Expect(old.Stop(30*time.Second)).To(Succeed(), "a restart of v1's pod")
			standby.waitLeads(ctx)
			replicas = []*cleanerProc{standby, startCleaner(ctx, id+"-v1-b", v1)}
		default:
			replicas = []*cleanerProc{old, startCleaner(ctx, id+"-v2-a", v2)}
			Consistently(old.leads).WithContext(ctx).WithTimeout(time.Second).Should(BeTrue(), "v1 still leads")
		}

		By("letting OLM replace v1: Replacing, Deleting, deleted")
		upgradeSelf(ctx, v1)
		Eventually(func(ctx context.Context) []string { return csvFinalizers(ctx, v1) }).WithContext(ctx).
			Should(Equal([]string{"gone"}), "v1's CSV is released at once")
		waitRBACFinalizers(ctx, selfRBACName(v1), [][]string{{}, {}})

		By("stopping v1's replicas, as the garbage collector deletes its Deployment with its CSV")
		for _, p := range replicas {
			if strings.Contains(p.Name, "-v1-") {
				Expect(p.Stop(30 * time.Second)).To(Succeed())
			}
		}
		if !sameDeployment && !newLeads {
			replicas[1].waitLeads(ctx)
		}
		Consistently(func(g Gomega, ctx context.Context) {
			g.Expect(busy.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
			g.Expect(live.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())

		By("letting the operand go: v2 completes the uninstall v1 began")
		released := time.Now()
		releaseOperand(ctx)
		busy.csvGone(ctx)
		Expect(busy.phase(ctx)).To(Equal("Completed/"))
		Expect(busy.remaining(ctx)).To(Equal([]string{"CRD " + busy.crd(0).Name()}))

		By("finding every finalizer kept at every version the watch saw")
		versions.keptHeld(busy, released)
		versions.keptHeld(live, time.Now())
		Expect(live.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
		Expect(rbacFinalizers(ctx, live.id+"-role")).To(Equal(held))
		Expect(csvFinalizers(ctx, v2)).To(ContainElement(decide.DefaultFinalizer))
		Expect(rbacFinalizers(ctx, selfRBACName(v2))).To(Equal(held), "v2 holds its own RBAC")
	}

	It("keeps every finalizer when a renamed v2 runs beside v1 and v1 leads", func(ctx SpecContext) {
		upgrade(ctx, "self-upold", false, false)
	})

	It("keeps every finalizer when a renamed v2 runs beside v1 and v2 leads", func(ctx SpecContext) {
		upgrade(ctx, "self-upnew", true, false)
	})

	It("keeps every finalizer when the same Deployment restarts with v2", func(ctx SpecContext) {
		upgrade(ctx, "self-upsame", false, true)
	})

	It("removes every finalizer it placed on SIGTERM when its namespace is deleted, and the namespace goes", func(ctx SpecContext) {
		self := types.NamespacedName{Namespace: "cc-self-nsdel", Name: "csv-cleaner.v0.1.0"}
		selfCSV(ctx, self, "")
		busy, _ := inFlight(ctx, "self-nsdel-busy")
		live := installed(ctx, "self-nsdel-live")
		replicas := []*cleanerProc{startCleaner(ctx, "self-nsdel-a", self), startCleaner(ctx, "self-nsdel-b", self)}
		busy.waitFinalizer(ctx)
		live.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, live.id+"-role", held)
		waitRBACFinalizers(ctx, selfRBACName(self), held)
		busy.deleteCSV(ctx)
		waitInFlight(ctx, busy)
		Expect(heldAnywhere(ctx)).NotTo(BeEmpty())

		By("deleting csv-cleaner's namespace and sending SIGTERM as soon as it is terminating, SIGKILL after the shipped grace period")
		Expect(k8s.Delete(ctx, fixtures.Namespace(self.Namespace))).To(Succeed())
		ns := fixtures.Namespace(self.Namespace)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ns), ns)).To(Succeed())
		Expect(ns.DeletionTimestamp).NotTo(BeNil())
		grace := shippedGracePeriod()
		var wg sync.WaitGroup
		errs := make([]error, len(replicas))
		for i, p := range replicas {
			wg.Go(func() { errs[i] = p.Stop(grace) })
		}
		wg.Wait()
		Expect(errs).To(HaveEach(Succeed()), "every replica exits within %s of SIGTERM", grace)

		By("finding no object with a finalizer of csv-cleaner's, and the namespace gone")
		Expect(heldAnywhere(ctx)).To(BeEmpty())
		Expect(busy.eventReasons(ctx)).To(ContainElement("UninstallAbandoned"))
		Expect(live.remaining(ctx)).To(ContainElements("CSV", "ClusterRole "+live.id+"-role"), "csv-cleaner let go of the operator, it did not uninstall it")
		Eventually(func(ctx context.Context) error { return k8s.Get(ctx, client.ObjectKeyFromObject(ns), ns) }).WithContext(ctx).
			WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
	})

	It("stops without releasing anything on SIGTERM while it stays installed", func(ctx SpecContext) {
		self := types.NamespacedName{Namespace: "cc-self-restart", Name: "csv-cleaner.v0.1.0"}
		selfCSV(ctx, self, "")
		live := installed(ctx, "self-restart-live")
		p := startCleaner(ctx, "self-restart-a", self)
		live.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, live.id+"-role", held)
		Expect(p.Stop(30 * time.Second)).To(Succeed())
		Expect(live.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
		Expect(rbacFinalizers(ctx, live.id+"-role")).To(Equal(held))
		Expect(csvFinalizers(ctx, self)).To(ContainElement(decide.DefaultFinalizer))
	})

	It("leaves `csv-cleaner release` to remove every finalizer after a SIGKILL, and prints what it removed", func(ctx SpecContext) {
		self := types.NamespacedName{Namespace: "cc-self-killed", Name: "csv-cleaner.v0.1.0"}
		selfCSV(ctx, self, "")
		busy, _ := inFlight(ctx, "self-killed-busy")
		live := installed(ctx, "self-killed-live")
		p := startCleaner(ctx, "self-killed-a", self)
		busy.waitFinalizer(ctx)
		live.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, live.id+"-role", held)
		busy.deleteCSV(ctx)
		waitInFlight(ctx, busy)
		p.Kill()
		left := heldAnywhere(ctx)
		Expect(left).To(ContainElements("ClusterServiceVersion "+live.install.Key().String(), "ClusterRole "+live.id+"-role"))

		out, err := exec.CommandContext(ctx, cleanerBinary(ctx), "release", "--kubeconfig="+cp.Kubeconfig).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		Expect(lines).To(ContainElements(
			"ClusterServiceVersion "+live.install.Key().String()+": removed ["+decide.DefaultFinalizer+"]",
			"ClusterServiceVersion "+busy.install.Key().String()+": removed ["+decide.DefaultFinalizer+"] (its uninstall is abandoned)",
			"ClusterRole "+live.id+"-role: removed ["+rbac.HoldFinalizer+"]",
			"ClusterRoleBinding "+live.id+"-role: removed ["+rbac.HoldFinalizer+"]",
		))
		Expect(lines[len(lines)-1]).To(Equal("Released " + strconv.Itoa(len(left)) + " objects (1 uninstalls abandoned)."))
		Expect(heldAnywhere(ctx)).To(BeEmpty())
		Expect(busy.eventReasons(ctx)).To(ContainElement("UninstallAbandoned"))
	})
})
