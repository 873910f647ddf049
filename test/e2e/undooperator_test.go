//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var undoOperator = samplePackage("undo-operator")

var _ = Describe("An undo and an operator that finds its children by their ownerReferences, with real OLM and Velero", func() {
	BeforeEach(skipUnlessLocalVelero)

	It("undone before the operator is installed again, then installed: the operator finds each restored widget's Secret linked to it, with its data, and makes no second one", func(ctx SpecContext) {
		in := newInstall(undoOperator)
		in.create(ctx, withVelero)
		a, b := in.ns("a"), in.ns("b")
		op := startChildOperator(in.crd(), client.ObjectKey{Namespace: in.sub.Namespace, Name: fixtures.SampleServiceAccount}, a, b)
		Eventually(func() bool { up, _ := op.running(); return up }).Should(BeTrue(), "the operator runs with the Deployment OLM made")
		gcWatches(ctx, in.crd(), a)

		By("two widgets: the operator makes each a Secret with a password, by a generated name")
		made := map[string]corev1.Secret{}
		for _, ns := range []string{a, b} {
			w := fixtures.Operand(in.crd(), ns, "db")
			Expect(kc.Client.Create(ctx, w)).To(Succeed())
			in.lastOperand = w.GetCreationTimestamp()
			Eventually(func(ctx context.Context) []corev1.Secret { return controlled(ctx, ns, w.GetUID()) }).WithContext(ctx).Should(HaveLen(1))
			made[ns] = controlled(ctx, ns, w.GetUID())[0]
		}
		Expect(op.made.Load()).To(BeEquivalentTo(2))
		startVelero(ctx)

		By("uninstalling: the widgets and their Secrets go, backed up first; OLM's Deployment goes, and the operator stops")
		in.uninstall(ctx)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		Eventually(func() bool { up, _ := op.running(); return up }).Should(BeFalse())
		for ns, s := range made {
			Eventually(func(ctx context.Context) error {
				return kc.Client.Get(ctx, client.ObjectKeyFromObject(&s), &corev1.Secret{})
			}).WithContext(ctx).
				ShouldNot(Succeed(), "the garbage collector deletes the Secret of %s", ns)
		}
		_, started := op.running()

		By("undoing before the operator is installed again: the widgets and their Secrets come back, each Secret linked to its widget")
		out, code := undo(ctx, "--namespace", in.sub.Namespace, in.csv)
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(ContainSubstring("4 restored, 0 present already, 0 missing"), ContainSubstring("the operator may run again now")))
		up, runs := op.running()
		Expect(up).To(BeFalse(), "nothing ran the operator during the undo")
		Expect(runs).To(Equal(started))

		By("installing the operator again: it starts, reconciles each restored widget, finds the Secret it controls, and makes none")
		Expect(kc.Resubscribe(ctx, in.sub)).To(Succeed())
		_, err := kc.WaitForCSVPhase(ctx, in.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { _, runs := op.running(); return runs }).Should(BeNumerically(">", started), "the operator starts with the Deployment OLM made again")
		for ns, was := range made {
			w := &unstructured.Unstructured{}
			w.SetGroupVersionKind(in.crd().GVK())
			Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, w)).To(Succeed())
			Eventually(func() int { return op.reconciles(w.GetUID()) }).WithTimeout(time.Minute).Should(BeNumerically(">=", 1), "the operator reconciles the restored widget of %s", ns)
			Consistently(func(ctx context.Context) []corev1.Secret { return controlled(ctx, ns, w.GetUID()) }).WithContext(ctx).WithTimeout(3*time.Second).
				Should(ConsistOf(And(HaveField("Name", was.Name), HaveField("Data", was.Data))), "one Secret for the widget of %s: the restored one, with its password", ns)
		}
		Expect(op.made.Load()).To(BeEquivalentTo(2), "the operator made no Secret beside the restored ones")
		AddReportEntry("The operator after the undo", fmt.Sprintf("started %d times, made %d Secrets in all (the first two), one Secret per restored widget", func() int { _, r := op.running(); return r }(), op.made.Load()))
	})
})
