//go:build e2e

package e2e_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// sampleFinalizer is the sample operator's finalizer on its widgets (test/sampleoperator).
const sampleFinalizer = "sample.e2e.csv-cleaner.io/cleanup"

// The operator of these packages manages its widgets with the rights OLM
// grants it in its own namespace, which last until its CSV is gone.
var (
	finActs   = namespacedRights(samplePackage("fin-acts"))
	finWait   = namespacedRights(samplePackage("fin-wait"))
	finStrip  = namespacedRights(samplePackage("fin-strip"))
	finOrphan = namespacedRights(samplePackage("fin-orphan"))
)

func namespacedRights(id string) string {
	p := packages[id]
	p.NamespacedOperandRights = true
	packages[id] = p
	return id
}

// ownNamespace installs the package for its own namespace, where OLM's Role
// gives the operator what it needs until its CSV is gone.
func ownNamespace(id string) *install {
	in := newInstall(id)
	in.sub.Targets = []string{in.sub.Namespace}
	return in
}

// startOperator runs the sample operator as the ServiceAccount OLM created for it.
func startOperator(in *install) *controlplane.Process {
	GinkgoHelper()
	p, err := kc.SampleOperator("sample-operator-"+in.id, in.crd().Group, in.crd().Kind,
		in.sub.Namespace+"/"+fixtures.SampleServiceAccount, in.sub.Namespace)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = p.Stop(10 * time.Second) })
	return p
}

// finalizedWidgets creates widgets w1 and w2 in the operator's namespace
// and waits until the operator has put its finalizer on both.
func finalizedWidgets(ctx context.Context, in *install) {
	GinkgoHelper()
	finalizedWidgetsIn(ctx, in, in.sub.Namespace)
}

// finalizedWidgetsIn creates widgets w1 and w2 in each namespace and waits
// until the operator has put its finalizer on all of them.
func finalizedWidgetsIn(ctx context.Context, in *install, namespaces ...string) {
	GinkgoHelper()
	for _, ns := range namespaces {
		in.widget(ctx, ns, "w1")
		in.widget(ctx, ns, "w2")
	}
	Eventually(func(g Gomega, ctx context.Context) {
		list := widgetList(in)
		g.Expect(kc.Client.List(ctx, list)).To(Succeed())
		g.Expect(list.Items).To(HaveLen(2 * len(namespaces)))
		for _, w := range list.Items {
			g.Expect(w.GetFinalizers()).To(ConsistOf(sampleFinalizer))
		}
	}).WithContext(ctx).Should(Succeed(), "the sample operator finalizes its widgets (see sample-operator-%s.log)", in.id)
}

var _ = Describe("An operator that finalizes its operands", func() {
	It("finalizes them during the uninstall while it can act", func(ctx SpecContext) {
		in := ownNamespace(finActs)
		in.create(ctx)
		startOperator(in)
		finalizedWidgets(ctx, in)
		in.uninstall(ctx)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD " + in.crd().Name()))
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
	})

	DescribeTable("when the operator is stopped, follows onTimeout",
		func(ctx SpecContext, id string, onTimeout cleanupv1alpha1.TimeoutAction, after func(context.Context, *install)) {
			in := ownNamespace(id)
			in.create(ctx, func(s *cleanupv1alpha1.CleanupPolicySpec) {
				s.OperandTimeout = &metav1.Duration{Duration: 3 * time.Second}
				s.OnTimeout = onTimeout
			})
			op := startOperator(in)
			finalizedWidgets(ctx, in)
			Expect(op.Stop(10 * time.Second)).To(Succeed())
			in.uninstall(ctx)

			By("the record lists the operands and their finalizers")
			Eventually(func(g Gomega, ctx context.Context) {
				rec, err := in.record(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(rec.Status.Blocking).To(ConsistOf(
					cleanupv1alpha1.ObjectRef{Kind: in.crd().Kind + "." + in.crd().Group, Namespace: in.sub.Namespace, Name: "w1", Finalizers: []string{sampleFinalizer}, Reason: "Finalizers"},
					cleanupv1alpha1.ObjectRef{Kind: in.crd().Kind + "." + in.crd().Group, Namespace: in.sub.Namespace, Name: "w2", Finalizers: []string{sampleFinalizer}, Reason: "Finalizers"},
				))
			}).WithContext(ctx).Should(Succeed())
			after(ctx, in)
		},
		Entry("Wait: Blocked until the operator is back", finWait, cleanupv1alpha1.TimeoutWait, func(ctx context.Context, in *install) {
			in.waitPhase(ctx, string(cleanupv1alpha1.PhaseBlocked)+"/"+cleanupv1alpha1.BlockedOperandsRemaining)
			Expect(in.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
			Expect(in.remaining(ctx)).To(ContainElements(widgets(in.sub.Namespace+"/w1", in.sub.Namespace+"/w2")))
			By("starting the operator again: it finalizes them and the uninstall completes")
			startOperator(in)
			in.waitCSVGone(ctx)
			Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
				Should(ConsistOf("CRD " + in.crd().Name()))
			Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
		}),
		Entry("RemoveFinalizers: the operands go", finStrip, cleanupv1alpha1.TimeoutRemoveFinalizers, func(ctx context.Context, in *install) {
			in.waitCSVGone(ctx)
			Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
				Should(ConsistOf("CRD " + in.crd().Name()))
			Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
		}),
		Entry("Orphan: the operands stay, terminating", finOrphan, cleanupv1alpha1.TimeoutOrphan, func(ctx context.Context, in *install) {
			in.waitCSVGone(ctx)
			Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
				Should(ConsistOf(append(widgets(in.sub.Namespace+"/w1", in.sub.Namespace+"/w2"), "CRD "+in.crd().Name())))
			rec, err := in.record(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
			Expect(rec.Status.Counts).To(ContainElement(HaveField("Kept", ContainElement(
				cleanupv1alpha1.KeptCount{Reason: cleanupv1alpha1.KeepTimedOut, Count: 2}))))
			Expect(terminating(ctx, in, in.sub.Namespace)).To(Equal(2))
		}),
	)
})
