package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/manager"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// operandHold is a finalizer the tests put on operands, as an operator would.
const operandHold = "test.csv-cleaner.io/operator"

// rbacFinalizers returns the finalizers of the ClusterRole and the
// ClusterRoleBinding called name, or ["gone"] for one that does not exist.
func rbacFinalizers(ctx context.Context, name string) [][]string {
	var out [][]string
	for _, o := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
		err := k8s.Get(ctx, client.ObjectKey{Name: name}, o)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, []string{"gone"})
		case err != nil:
			out = append(out, []string{err.Error()})
		default:
			out = append(out, append([]string{}, o.GetFinalizers()...))
		}
	}
	return out
}

var held = [][]string{{rbac.HoldFinalizer}, {rbac.HoldFinalizer}}

// heldInstall creates a managed install with owned cluster RBAC, <id>-role,
// and waits until csv-cleaner holds the CSV and that RBAC.
func heldInstall(ctx context.Context, id string) *scenario {
	GinkgoHelper()
	s := installed(ctx, id)
	s.waitFinalizer(ctx)
	waitRBACFinalizers(ctx, s.id+"-role", held)
	return s
}

// waitRBACFinalizers waits until rbacFinalizers(name) is want.
func waitRBACFinalizers(ctx context.Context, name string, want [][]string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) [][]string { return rbacFinalizers(ctx, name) }).WithContext(ctx).Should(Equal(want))
}

// rbacContent is what csv-cleaner must never change on a ClusterRole and its binding.
func rbacContent(ctx context.Context, name string) []any {
	GinkgoHelper()
	role, binding := &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, role)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, binding)).To(Succeed())
	return []any{role.Labels, role.Annotations, role.Rules, role.AggregationRule, role.OwnerReferences,
		binding.Labels, binding.Annotations, binding.RoleRef, binding.Subjects, binding.OwnerReferences}
}

// deleteRBAC deletes the ClusterRole and binding called name, as OLM's own finalizer does.
func deleteRBAC(ctx context.Context, name string) {
	GinkgoHelper()
	Expect(k8s.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	Expect(k8s.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

var _ = Describe("The RBAC hold", func() {
	It("holds the CSV's cluster RBAC, also RBAC added later, and writes nothing but the finalizer", func(ctx SpecContext) {
		s := newScenario("hold-live")
		s.createPolicy(ctx)
		s.create(ctx)
		s.ownedRBAC(ctx, "role")
		// Only olm.owner: RBAC shipped in a bundle, not OLM's for this CSV.
		s.clusterRole(ctx, "bundle", map[string]string{rbac.OwnerKey: s.install.CSVName})
		before := rbacContent(ctx, s.id+"-role")
		s.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, s.id+"-role", held)

		By("an upgrade adds a ClusterRole: it is held too")
		s.ownedRBAC(ctx, "later")
		waitRBACFinalizers(ctx, s.id+"-later", held)
		bundle := &rbacv1.ClusterRole{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.id + "-bundle"}, bundle)).To(Succeed())
		Expect(bundle.Finalizers).To(BeEmpty())
		Expect(rbacContent(ctx, s.id+"-role")).To(Equal(before), "rules, labels, annotations, subjects unchanged")
	})

	It("keeps the RBAC OLM deletes in force until the operands are finalized, then releases it", func(ctx SpecContext) {
		s := newScenario("hold-uninstall")
		s.createPolicy(ctx)
		s.create(ctx)
		w := s.operand(ctx, 0, s.ns("a"), "w1", operandHold)
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, s.id+"-role", held)
		before := rbacContent(ctx, s.id+"-role")

		s.deleteCSV(ctx)
		deleteRBAC(ctx, s.id+"-role")
		Consistently(func(g Gomega, ctx context.Context) {
			g.Expect(rbacFinalizers(ctx, s.id+"-role")).To(Equal(held))
			role := &rbacv1.ClusterRole{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: s.id + "-role"}, role)).To(Succeed())
			g.Expect(role.DeletionTimestamp).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(2*time.Second).Should(Succeed(), "terminating, and so still in force, while the operand waits")
		Expect(rbacContent(ctx, s.id+"-role")).To(Equal(before))

		By("the operator finalizes its operand: the hold goes, then the RBAC and the CSV")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		w.SetFinalizers(nil)
		Expect(k8s.Update(ctx, w)).To(Succeed())
		s.csvGone(ctx)
		Expect(rbacFinalizers(ctx, s.id+"-role")).To(Equal([][]string{{"gone"}, {"gone"}}))
		Expect(s.phase(ctx)).To(Equal("Completed/"))
	})

	It("is released at once when the deletion is not an uninstall", func(ctx SpecContext) {
		s := heldInstall(ctx, "hold-upgrade")
		v2 := s.install.CSV()
		v2.Name = s.id + "-operator.v2.0.0"
		v2.Spec.Replaces = s.install.CSVName
		Expect(k8s.Create(ctx, v2)).To(Succeed())
		s.deleteCSV(ctx)
		deleteRBAC(ctx, s.id+"-role")
		s.csvGone(ctx)
		waitRBACFinalizers(ctx, s.id+"-role", [][]string{{"gone"}, {"gone"}})
		Expect(s.phase(ctx)).To(Equal("Skipped/Upgrade"))
	})

	It("is released when no policy manages the CSV any more, or the hold is turned off", func(ctx SpecContext) {
		s := heldInstall(ctx, "hold-unmanaged")

		By("turning the hold off")
		restartManagerWith(func(o *manager.SetupOptions) { o.DisableRBACHold = true })
		waitRBACFinalizers(ctx, s.id+"-role", [][]string{{}, {}})
		stopManager()
		startManager()
		waitRBACFinalizers(ctx, s.id+"-role", held)

		By("deleting the policy")
		Expect(k8s.Delete(ctx, s.policy)).To(Succeed())
		waitRBACFinalizers(ctx, s.id+"-role", [][]string{{}, {}})
		Eventually(func(ctx context.Context) []string { return s.finalizers(ctx) }).WithContext(ctx).ShouldNot(ContainElement(decide.DefaultFinalizer))
	})

	It("is released under its configured name when turned off (--rbac-hold=false --rbac-hold-finalizer=X)", func(ctx SpecContext) {
		const custom = "test.csv-cleaner.io/custom-hold"
		restartManagerWith(func(o *manager.SetupOptions) { o.RBACHold = custom })
		s := installed(ctx, "hold-named")
		s.waitFinalizer(ctx)
		waitRBACFinalizers(ctx, s.id+"-role", [][]string{{custom}, {custom}})

		By("turning the hold off with the same finalizer name")
		restartManagerWith(func(o *manager.SetupOptions) { o.RBACHold, o.DisableRBACHold = custom, true })
		waitRBACFinalizers(ctx, s.id+"-role", [][]string{{}, {}})
	})

	It("takes every finalizer it placed off CSVs and RBAC when csv-cleaner's own CSV is deleted", func(ctx SpecContext) {
		s := heldInstall(ctx, "hold-self")

		self := fixtures.Install{Namespace: "self-" + s.id, CSVName: "csv-cleaner.v0.1.0", Targets: []string{""}}
		_, err := self.Create(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		restartManagerWith(func(o *manager.SetupOptions) { o.Self = self.Key() })
		selfFinalizers := func(ctx context.Context) []string {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := k8s.Get(ctx, self.Key(), csv); err != nil {
				return []string{err.Error()}
			}
			return csv.Finalizers
		}
		Eventually(selfFinalizers).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer), "its own CSV, though no policy selects it")

		By("uninstalling csv-cleaner")
		Expect(k8s.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: self.CSVName}})).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return k8s.Get(ctx, self.Key(), &operatorsv1alpha1.ClusterServiceVersion{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.finalizers(ctx)).NotTo(ContainElement(decide.DefaultFinalizer))
		Expect(rbacFinalizers(ctx, s.id+"-role")).To(Equal([][]string{{}, {}}))
		Consistently(func(ctx context.Context) []string { return s.finalizers(ctx) }).WithContext(ctx).WithTimeout(2*time.Second).
			ShouldNot(ContainElement(decide.DefaultFinalizer), "while csv-cleaner still runs, it places none again")
	})

	It("reports an operator whose Deployment is gone as OperatorUnavailable, then follows onTimeout", func(ctx SpecContext) {
		s := newScenario("hold-nodeploy")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.OperandTimeout = &metav1.Duration{Duration: 3 * time.Second}
			p.OnTimeout = cleanupv1alpha1.TimeoutRemoveFinalizers
		})
		csv := s.create(ctx)
		base := csv.DeepCopy()
		// The sample operator's Deployment, which nobody creates here: as if foreground deletion removed it.
		csv.Spec.InstallStrategy = s.install.SampleCSV("").Spec.InstallStrategy
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
		s.operand(ctx, 0, s.ns("a"), "w1", operandHold)
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedOperatorUnavailable)
		rec := s.record(ctx)
		Expect(rec.Status.Message).To(ContainSubstring("Deployment " + types.NamespacedName{Namespace: s.install.Namespace, Name: "sample-operator"}.String() + " is gone"))
		Expect(rec.Status.Blocking).To(ConsistOf(HaveField("Finalizers", []string{operandHold})))
		s.csvGone(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})
})
