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
