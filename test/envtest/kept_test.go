package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("An operand created in the same second as the CSV's deletion", func() {
	It("is kept, as one created seconds later is, and the record says why", func(ctx SpecContext) {
		s := newScenario("same-second")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w-before")
		s.waitFinalizer(ctx)

		By("deleting the CSV early in a second, then creating an operand 100 ms later, in that second")
		scaleToZero()
		s.afterOperands()
		fixtures.WaitNextSecond(time.Now()) // at the start of a second
		s.deleteCSV(ctx)
		time.Sleep(100 * time.Millisecond)
		same := s.operand(ctx, 0, s.ns("a"), "w-same-second")
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(same.GetCreationTimestamp().Time).To(Equal(csv.DeletionTimestamp.Time), "the operand's creationTimestamp is the deletion's second")
		time.Sleep(2 * time.Second)
		s.operand(ctx, 0, s.ns("a"), "w-later")
		startManager()

		s.csvGone(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		Expect(s.record(ctx).Status.Kept).To(ConsistOf(
			cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-same-second", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion},
			cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-later", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion},
		))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-same-second", "Widget "+s.ns("a")+"/w-later"))
	})
})

var _ = Describe("The record's list of kept objects", func() {
	It("names what the uninstall left in place, with the reasons, the most specific first, and the total", func(ctx SpecContext) {
		s := newScenario("kept")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 0, s.ns("c"), "w-outside") // c-kept is no target
		s.waitFinalizer(ctx)

		By("deleting the CSV while csv-cleaner is stopped, then creating an operand a second later")
		scaleToZero()
		s.deleteCSV(ctx)
		time.Sleep(1100 * time.Millisecond)
		s.operand(ctx, 0, s.ns("a"), "w-late")
		startManager()

		s.csvGone(ctx)
		rec := s.record(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		Expect(rec.Status.Kept).To(Equal([]cleanupv1alpha1.ObjectRef{
			{Kind: kind, Namespace: s.ns("a"), Name: "w-late", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion},
			{Kind: kind, Namespace: s.ns("c"), Name: "w-outside", Reason: cleanupv1alpha1.KeepOutsideTargets},
		}))
		Expect(rec.Status.KeptTotal).To(BeEquivalentTo(2))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-late", "Widget "+s.ns("c")+"/w-outside"))
	})
})
