package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// An operand holds a finalizer that nobody processes (its operator is gone).
const stuckFinalizer = "widgets.example.com/teardown"

var _ = Describe("Operands that outlive operandTimeout", func() {
	// setup installs the scenario with one operand that holds a finalizer and
	// one that does not, under a 2 s operandTimeout with the given onTimeout.
	setup := func(ctx SpecContext, s *scenario, onTimeout cleanupv1alpha1.TimeoutAction) *unstructured.Unstructured {
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.OperandTimeout = &metav1.Duration{Duration: 2 * time.Second}
			p.OnTimeout = onTimeout
		})
		s.create(ctx)
		stuck := s.operand(ctx, 0, s.ns("a"), "stuck", stuckFinalizer)
		s.operand(ctx, 0, s.ns("b"), "free")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)
		return stuck
	}

	It("with onTimeout: Wait stays Blocked, lists the operand and its finalizer, and completes once it goes", func(ctx SpecContext) {
		s := newScenario("to-wait")
		stuck := setup(ctx, s, cleanupv1alpha1.TimeoutWait)
		s.waitPhase(ctx, "Blocked/OperandsRemaining")
		rec := s.record(ctx)
		Expect(rec.Status.Blocking).To(Equal([]cleanupv1alpha1.ObjectRef{{
			Kind: "Widget." + s.crd(0).Group, Namespace: s.ns("a"), Name: "stuck", Finalizers: []string{stuckFinalizer}, Reason: "Finalizers",
		}}))
		Expect(rec.Status.Remaining).To(BeEquivalentTo(1))
		Expect(rec.Status.Conditions).To(ContainElement(And(HaveField("Type", "Blocked"), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "OperandsRemaining"))))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))
		// The operand step holds the rest: cluster RBAC is still there.
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "ClusterRole to-wait-role", "ClusterRoleBinding to-wait-role", "Widget " + s.ns("a") + "/stuck"}))

		By("the operand's finalizer being processed at last")
		Expect(k8s.Patch(ctx, stuck, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.record(ctx).Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
	})

	It("with onTimeout: RemoveFinalizers strips the operand's finalizers with an Event, and completes", func(ctx SpecContext) {
		s := newScenario("to-strip")
		setup(ctx, s, cleanupv1alpha1.TimeoutRemoveFinalizers)
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		events := &eventsv1.EventList{}
		Expect(k8s.List(ctx, events, client.InNamespace(s.ns("a")))).To(Succeed())
		Expect(events.Items).To(ContainElement(And(HaveField("Reason", "FinalizersRemoved"), HaveField("Regarding.Name", "stuck"))))
	})

	It("with onTimeout: Orphan stops waiting, keeps the operand and records it", func(ctx SpecContext) {
		s := newScenario("to-orphan")
		stuck := setup(ctx, s, cleanupv1alpha1.TimeoutOrphan)
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/stuck"}))
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(stuck.GroupVersionKind())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(stuck), got)).To(Succeed())
		Expect(got.GetFinalizers()).To(Equal([]string{stuckFinalizer}), "Orphan must not touch the operand's finalizers")
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(count(rec, "Widget."+s.crd(0).Group)).To(Equal(cleanupv1alpha1.KindCount{
			Kind: "Widget." + s.crd(0).Group, Found: 2, Deleted: 1, Remaining: 0,
			Kept: []cleanupv1alpha1.KeptCount{{Reason: "TimedOut", Count: 1}},
		}))
		Expect(k8s.Patch(ctx, stuck, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	})
})
