package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

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
