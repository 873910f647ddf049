package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

var _ = Describe("The finalizer on managed CSVs", func() {
	It("is added after OLM's finalizer, which stays first", func(ctx SpecContext) {
		s := newScenario("fin-olm")
		s.install.Finalizers = []string{decide.OLMFinalizer}
		s.createPolicy(ctx)
		s.create(ctx)
		Eventually(s.finalizers).WithContext(ctx).Should(Equal([]string{decide.OLMFinalizer, decide.DefaultFinalizer}))
	})

	It("is not added when no policy selects the CSV", func(ctx SpecContext) {
		s := newScenario("fin-none")
		selected := newScenario("fin-none2")
		selected.createPolicy(ctx)
		s.create(ctx)
		selected.create(ctx)
		selected.waitFinalizer(ctx)
		Consistently(s.finalizers).WithContext(ctx).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("is removed when the policy is deleted, keeping OLM's", func(ctx SpecContext) {
		s := newScenario("fin-polrm")
		s.install.Finalizers = []string{decide.OLMFinalizer}
		s.createPolicy(ctx)
		s.create(ctx)
		s.waitFinalizer(ctx)
		Expect(k8s.Delete(ctx, s.policy)).To(Succeed())
		Eventually(s.finalizers).WithContext(ctx).Should(Equal([]string{decide.OLMFinalizer}))
	})

	It("is removed when the policy changes to no longer select the CSV", func(ctx SpecContext) {
		s := newScenario("fin-polch")
		s.createPolicy(ctx)
		s.create(ctx)
		s.waitFinalizer(ctx)
		patch := client.MergeFrom(s.policy.DeepCopy())
		s.policy.Spec.CSVSelector.MatchLabels["test"] = "nothing"
		Expect(k8s.Patch(ctx, s.policy, patch)).To(Succeed())
		Eventually(s.finalizers).WithContext(ctx).Should(BeEmpty())
	})

	It("replaces a legacy finalizer in place on a live CSV", func(ctx SpecContext) {
		s := newScenario("fin-legacy")
		s.install.Finalizers = []string{legacyFinalizer, decide.OLMFinalizer}
		s.createPolicy(ctx)
		s.create(ctx)
		Eventually(s.finalizers).WithContext(ctx).Should(Equal([]string{decide.DefaultFinalizer, decide.OLMFinalizer}))
	})

	It("counts a legacy finalizer on a deleting CSV as its own and completes the uninstall", func(ctx SpecContext) {
		s := newScenario("fin-legdel")
		s.install.Finalizers = []string{legacyFinalizer}
		scaleToZero()
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.deleteCSV(ctx)
		startManager()
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.record(ctx).Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
	})

	It("is never put on a copied CSV", func(ctx SpecContext) {
		s := newScenario("fin-copy")
		copied := newScenario("fin-copy")
		copied.install.Namespace = "a-fin-copy"
		s.createPolicy(ctx)
		s.create(ctx)
		s.waitFinalizer(ctx)
		// A copy as OLM makes it: same name, in a target namespace, pointing at the operator's namespace.
		cp := s.install.CSV()
		cp.Namespace = copied.install.Namespace
		cp.Labels[operatorsv1alpha1.CopiedLabelKey] = s.install.Namespace
		Expect(k8s.Create(ctx, cp)).To(Succeed())
		// And one that only OLM's annotation marks as a copy.
		annotated := s.install.CSV()
		annotated.Namespace = "b-fin-copy"
		Expect(k8s.Create(ctx, annotated)).To(Succeed())
		Consistently(func(g Gomega) {
			for _, c := range []*operatorsv1alpha1.ClusterServiceVersion{cp, annotated} {
				got := &operatorsv1alpha1.ClusterServiceVersion{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
				g.Expect(got.Finalizers).To(BeEmpty(), "copy %s", client.ObjectKeyFromObject(c))
			}
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
	})
})
