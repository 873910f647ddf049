package envtest_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
)

// A ClusterExtension deleted with --cascade=foreground: the garbage
// collector deletes its CRDs (and with them every custom resource), its
// operator and its RBAC at once, while the extension waits. The custom
// resources carry the operator's finalizer, which nobody removes once the
// operator is gone: here nobody runs it at all.
var _ = Describe("A ClusterExtension deleted with --cascade=foreground, its operator gone at once", func() {
	const resources = 4
	const timeout = 5 * time.Second

	// start creates the extension with its resources, each with the
	// operator's finalizer, and deletes it in the foreground.
	start := func(ctx context.Context, id string, onTimeout cleanupv1alpha1.TimeoutAction) *extScenario {
		GinkgoHelper()
		s := newExtScenario(id)
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.OperandTimeout = &metav1.Duration{Duration: timeout}
			p.OnTimeout = onTimeout
		})
		s.create(ctx)
		for i := range resources {
			u := s.finalizedResource(ctx, s.ns([]string{"a", "b"}[i%2]), fmt.Sprintf("r%d", i))
			DeferCleanup(s.releaseResource, u) // whatever the spec left, so that the CRD goes
		}
		s.afterResources()
		s.deleteAsOperatorController(ctx, ptr.To(metav1.DeletePropagationForeground))
		By("the garbage collector deleting the CRD, the operator and its RBAC at once")
		Eventually(present).WithContext(ctx).WithArguments(s.objs.Deployment).Should(BeFalse())
		Eventually(s.crdTerminating).WithContext(ctx).Should(BeTrue())
		return s
	}
	kind := func(s *extScenario) string { return s.ext.CRDs[0].Kind + "." + s.ext.CRDs[0].Group }

	// neverCompletedEarly fails the spec whenever the record says Completed
	// while a custom resource the uninstall deletes still exists.
	neverCompletedEarly := func(ctx context.Context, s *extScenario, keptOnTimeout bool) {
		go func() {
			defer GinkgoRecover()
			for ctx.Err() == nil {
				if s.phase(ctx) == string(cleanupv1alpha1.PhaseCompleted) {
					if !keptOnTimeout {
						Expect(s.resources(ctx)).To(BeEmpty(), "the record said Completed while custom resources existed")
					}
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	It("removes the finalizers after operandTimeout (RemoveFinalizers), waits for every custom resource and the CRD to be gone, and only then says Completed, with the end's counts", func(ctx SpecContext) {
		s := start(ctx, "xfgrm", cleanupv1alpha1.TimeoutRemoveFinalizers)
		neverCompletedEarly(ctx, s, false)
		Consistently(s.phase).WithContext(ctx).WithTimeout(timeout / 2).ShouldNot(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Eventually(s.phase).WithContext(ctx).WithTimeout(60 * time.Second).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(s.resources(ctx)).To(BeEmpty())
		Expect(s.crdExists(ctx)).To(BeFalse(), "the CRD, once its instances were gone")
		rec := s.record(ctx)
		Expect(rec.Status.Cascade).To(Equal(string(olmv1.CascadeForeground)))
		Expect(rec.Status.Remaining).To(BeZero())
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", kind(s)), HaveField("Found", BeEquivalentTo(resources)),
			HaveField("Deleted", BeEquivalentTo(resources)), HaveField("Remaining", BeZero()))))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", decide.CRDKind), HaveField("Found", BeEquivalentTo(1)),
			HaveField("Remaining", BeZero()))))
		Expect(rec.Status.CompletionTime.Time).To(BeTemporally(">=", rec.Status.StartTime.Add(timeout)))
		Expect(s.extEventReasons(ctx)).To(ContainElement("ForegroundCascade"))
		By("the garbage collector finishing: the extension is gone")
		Eventually(s.finalizers).WithContext(ctx).WithTimeout(60 * time.Second).Should(BeNil())
	})

	It("stays Blocked past operandTimeout with onTimeout: Wait, holding the extension, and says what holds it", func(ctx SpecContext) {
		s := start(ctx, "xfgwait", cleanupv1alpha1.TimeoutWait)
		neverCompletedEarly(ctx, s, false)
		Eventually(s.phase).WithContext(ctx).WithTimeout(60 * time.Second).Should(Equal(string(cleanupv1alpha1.PhaseBlocked)))
		Eventually(func(ctx context.Context) string { return s.record(ctx).Status.Reason }).WithContext(ctx).
			WithTimeout(60 * time.Second).Should(Equal(cleanupv1alpha1.BlockedOperandsRemaining))
		rec := s.record(ctx)
		Expect(rec.Status.Message).To(ContainSubstring(fmt.Sprintf("%d operands still exist after operandTimeout", resources)))
		Expect(rec.Status.Message).To(ContainSubstring("--cascade=foreground"))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", kind(s)), HaveField("Remaining", BeEquivalentTo(resources)))))
		Consistently(s.finalizers).WithContext(ctx).WithTimeout(2 * time.Second).Should(ContainElement(decide.DefaultFinalizer))
		Expect(s.resources(ctx)).To(HaveLen(resources))
	})

	It("keeps them with onTimeout: Orphan and says Completed, the record saying that they, their CRD and the extension stay until their finalizers go", func(ctx SpecContext) {
		s := start(ctx, "xfgorph", cleanupv1alpha1.TimeoutOrphan)
		neverCompletedEarly(ctx, s, true)
		Eventually(s.phase).WithContext(ctx).WithTimeout(60 * time.Second).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		rec := s.record(ctx)
		Expect(rec.Status.Remaining).To(BeZero())
		Expect(rec.Status.CompletionTime.Time).To(BeTemporally(">=", rec.Status.StartTime.Add(timeout)))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", kind(s)), HaveField("Remaining", BeZero()), HaveField("Kept",
			ContainElement(cleanupv1alpha1.KeptCount{Reason: cleanupv1alpha1.KeepTimedOut, Count: resources})))))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", decide.CRDKind), HaveField("Kept",
			ContainElement(cleanupv1alpha1.KeptCount{Reason: cleanupv1alpha1.KeepHasInstances, Count: 1})))))
		Expect(rec.Status.Message).To(ContainSubstring("remain, being deleted and held by finalizers"))
		Expect(s.resources(ctx)).To(HaveLen(resources))
		Expect(s.crdExists(ctx)).To(BeTrue())
	})
})

// finalizedResource creates an instance of the extension's CRD carrying its operator's finalizer.
func (s *extScenario) finalizedResource(ctx context.Context, ns, name string) *unstructured.Unstructured {
	GinkgoHelper()
	s.resource(ctx, ns, name)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.ext.CRDs[0].GVK())
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	u.SetFinalizers([]string{sampleFinalizer})
	Expect(k8s.Update(ctx, u)).To(Succeed())
	return u
}

// releaseResource removes the operator's finalizer from a resource, if it is still there.
func (s *extScenario) releaseResource(ctx context.Context, u *unstructured.Unstructured) {
	cur := u.DeepCopy()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), cur); err != nil {
		return
	}
	cur.SetFinalizers(nil)
	_ = k8s.Update(ctx, cur)
}

// crdTerminating reports whether the extension's CRD is being deleted.
func (s *extScenario) crdTerminating(ctx context.Context) bool {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s.objs.CRDs[0]), crd); err != nil {
		return false
	}
	return !crd.DeletionTimestamp.IsZero()
}

// crdExists reports whether the extension's CRD exists, deleting or not.
func (s *extScenario) crdExists(ctx context.Context) bool {
	GinkgoHelper()
	err := k8s.Get(ctx, client.ObjectKeyFromObject(s.objs.CRDs[0]), &apiextensionsv1.CustomResourceDefinition{})
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	return true
}
