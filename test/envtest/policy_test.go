package envtest_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var _ = Describe("CleanupPolicy status", func() {
	It("counts the CSVs a policy manages and reports an overlap with another policy", func(ctx SpecContext) {
		a, b := newScenario("pol-a"), newScenario("pol-b")
		b.install.Labels = map[string]string{"test": "pol-a", "extra": "yes"} // selected by pol-a as well
		a.createPolicy(ctx)
		a.create(ctx)
		b.create(ctx)
		get := func(name string) func(context.Context) cleanupv1alpha1.CleanupPolicyStatus {
			return func(ctx context.Context) cleanupv1alpha1.CleanupPolicyStatus {
				p := &cleanupv1alpha1.CleanupPolicy{}
				Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, p)).To(Succeed())
				return p.Status
			}
		}
		Eventually(get("pol-a")).WithContext(ctx).Should(And(
			HaveField("ManagedCSVs", BeEquivalentTo(2)),
			HaveField("Conditions", ContainElement(And(HaveField("Type", "Overlapping"), HaveField("Status", metav1.ConditionFalse)))),
		))

		By("a second policy with a higher priority selecting one of the CSVs")
		hi := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "pol-hi"}}
		hi.Spec.Priority = 10
		hi.Spec.CSVSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"extra": "yes"}}
		Expect(k8s.Create(ctx, hi)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, hi))).To(Succeed()) })
		Eventually(get("pol-a")).WithContext(ctx).Should(And(
			HaveField("ManagedCSVs", BeEquivalentTo(1)),
			HaveField("Conditions", ContainElement(And(HaveField("Type", "Overlapping"), HaveField("Status", metav1.ConditionTrue), HaveField("Message", ContainSubstring("pol-hi"))))),
		))
		Eventually(get("pol-hi")).WithContext(ctx).Should(HaveField("ManagedCSVs", BeEquivalentTo(1)))
	})
})

var _ = Describe("A CleanupPolicy that selects ClusterExtensions", func() {
	It("is refused with operands: Orphan and crds: Delete, and without a csvSelector manages no CSV", func(ctx SpecContext) {
		s := newScenario("pol-ext")
		s.create(ctx)
		refused := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "pol-ext-refused"}}
		refused.Spec.ClusterExtensionSelector = &metav1.LabelSelector{}
		refused.Spec.Operands, refused.Spec.CRDs = cleanupv1alpha1.Orphan, cleanupv1alpha1.Delete
		err := k8s.Create(ctx, refused)
		Expect(err).To(MatchError(And(ContainSubstring("operands: Orphan with crds: Delete"), ContainSubstring("set crds: Orphan, or operands: Delete"))))

		By("the same combination for CSVs only, which keeps a CRD while it has instances")
		csvOnly := refused.DeepCopy()
		csvOnly.Name, csvOnly.Spec.ClusterExtensionSelector = "pol-ext-csvs", nil
		csvOnly.Spec.CSVSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": "nothing"}}
		Expect(k8s.Create(ctx, csvOnly)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, csvOnly))).To(Succeed()) })

		By("a policy with only a clusterExtensionSelector, beside the scenario's CSV")
		extOnly := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "pol-ext-only"}}
		extOnly.Spec.ClusterExtensionSelector = &metav1.LabelSelector{}
		Expect(k8s.Create(ctx, extOnly)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, extOnly))).To(Succeed()) })
		s.createPolicy(ctx)
		s.waitFinalizer(ctx)
		get := func(name string) func(context.Context) cleanupv1alpha1.CleanupPolicyStatus {
			return func(ctx context.Context) cleanupv1alpha1.CleanupPolicyStatus {
				p := &cleanupv1alpha1.CleanupPolicy{}
				Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, p)).To(Succeed())
				return p.Status
			}
		}
		Eventually(get(s.id)).WithContext(ctx).Should(HaveField("ManagedCSVs", BeEquivalentTo(1)))
		Eventually(get(extOnly.Name)).WithContext(ctx).Should(And(
			HaveField("Conditions", ContainElement(HaveField("Type", "Overlapping"))),
			HaveField("ManagedCSVs", BeZero())))
	})
})
