package envtest_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// secondScenario is an install whose CSV is deleted with one operand
// created about 100 ms before the delete and one about 100 ms after, all
// three in one second. The first operand carries a finalizer that holds the
// uninstall until release is called, so that csv-cleaner lists the second
// one before it completes. deleteInASecond tries again with a new install,
// a few times, when the API server's timestamps fall in two seconds; with
// stopped, csv-cleaner is stopped from before the deletion on.
type secondScenario struct {
	*scenario
	before, after *unstructured.Unstructured
}

func deleteInASecond(ctx context.Context, id string, stopped bool) secondScenario {
	GinkgoHelper()
	for try := range 4 {
		if running == nil {
			startManager()
		}
		s := newScenario(fmt.Sprintf("%s%d", id, try))
		s.createPolicy(ctx)
		s.create(ctx)
		s.waitFinalizer(ctx)
		if stopped {
			stopManager()
		}
		// 300 ms into a second: the three writes take some 250 ms.
		fixtures.WaitNextSecond(time.Now())
		time.Sleep(300 * time.Millisecond)
		before := s.operand(ctx, 0, s.ns("a"), "w-before", "example.com/hold")
		time.Sleep(100 * time.Millisecond)
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Delete(ctx, csv)).To(Succeed())
		time.Sleep(100 * time.Millisecond)
		after := s.operand(ctx, 0, s.ns("a"), "w-after")
		Expect(k8s.Get(ctx, s.install.Key(), csv)).To(Succeed())
		second := csv.DeletionTimestamp.Time
		if before.GetCreationTimestamp().Time.Equal(second) && after.GetCreationTimestamp().Time.Equal(second) {
			return secondScenario{scenario: s, before: before, after: after}
		}
		GinkgoWriter.Printf("try %d: the operands (%s, %s) and the deletion (%s) fell in two seconds; trying again\n", try,
			before.GetCreationTimestamp(), after.GetCreationTimestamp(), csv.DeletionTimestamp)
	}
	Fail("the operands and the CSV's deletion never fell in one second")
	return secondScenario{}
}

// release removes the held operand's finalizer, as its operator would.
func (s secondScenario) release(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(g Gomega, ctx context.Context) {
		w := &unstructured.Unstructured{}
		w.SetGroupVersionKind(s.crd(0).GVK())
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.before), w)).To(Succeed())
		g.Expect(w.GetDeletionTimestamp()).NotTo(BeNil(), "csv-cleaner deleted it")
		w.SetFinalizers(nil)
		g.Expect(k8s.Update(ctx, w)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}

var _ = Describe("An operand created in the second of the CSV's deletion", func() {
	It("is deleted when it existed before the deletion and kept when it came after, told apart at the deletion's revision", func(ctx SpecContext) {
		s := deleteInASecond(ctx, "exact", false)
		Eventually(func(ctx context.Context) string { return s.record(ctx).Status.DeletionRevision }).WithContext(ctx).ShouldNot(BeEmpty())
		s.release(ctx)
		s.csvGone(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		rec := s.record(ctx)
		Expect(rec.Status.Kept).To(ConsistOf(cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-after", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion}))
		Expect(count(rec, kind)).To(HaveField("Deleted", BeEquivalentTo(1)))
		Expect(rec.Status.Message).NotTo(ContainSubstring(cleanupv1alpha1.KeepCreatedInDeletionSecond))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-after"))
	})

	It("is told apart after csv-cleaner was stopped across the deletion, by the revision found after the fact", func(ctx SpecContext) {
		before := lookups(revisionSourceSearch)
		s := deleteInASecond(ctx, "restarted", true)
		startManager()
		s.release(ctx)
		s.csvGone(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		rec := s.record(ctx)
		Expect(rec.Status.DeletionRevisionFrom).To(Equal(cleanupv1alpha1.RevisionFromSearch))
		Expect(rec.Status.DeletionRevision).NotTo(BeEmpty())
		Expect(rec.Status.Kept).To(ConsistOf(cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-after", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion}))
		Expect(count(rec, kind)).To(HaveField("Deleted", BeEquivalentTo(1)))
		Expect(rec.Status.Message).NotTo(ContainSubstring(cleanupv1alpha1.KeepCreatedInDeletionSecond))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-after"))
		Expect(lookups(revisionSourceSearch)).To(BeNumerically(">=", before+2), "both operands of the second were looked up at the revision found")
	})

	It("is kept as of unknown age, and the record says how to finish, when the revisions before the deletion were compacted by the time csv-cleaner started", func(ctx SpecContext) {
		s := deleteInASecond(ctx, "ambiguous", true)
		_, err := cp.CompactEtcd(ctx)
		Expect(err).NotTo(HaveOccurred())
		startManager()
		s.csvGone(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		rec := s.record(ctx)
		Expect(rec.Status.DeletionRevision).To(BeEmpty())
		Expect(rec.Status.DeletionRevisionFrom).To(Equal(cleanupv1alpha1.RevisionNotFound))
		Expect(rec.Status.Kept).To(ConsistOf(
			cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-before", Reason: cleanupv1alpha1.KeepCreatedInDeletionSecond},
			cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-after", Reason: cleanupv1alpha1.KeepCreatedInDeletionSecond},
		))
		Expect(rec.Status.Message).To(ContainSubstring("2 operands created in the second the deletion began were kept (CreatedInDeletionSecond"))
		Expect(rec.Status.Message).To(ContainSubstring("the revisions before the deletion were compacted"))
		Expect(rec.Status.Message).To(ContainSubstring("delete those that belonged to the uninstalled operator by hand"))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-before", "Widget "+s.ns("a")+"/w-after"))
	})

	It("is told apart by the revision the record keeps, after csv-cleaner restarted", func(ctx SpecContext) {
		s := deleteInASecond(ctx, "exactrestart", false)
		Eventually(func(ctx context.Context) string { return s.record(ctx).Status.DeletionRevision }).WithContext(ctx).ShouldNot(BeEmpty())
		revision := s.record(ctx).Status.DeletionRevision

		By("restarting csv-cleaner: its watch now shows the CSV deleting from the start, with no revision of its own")
		stopManager()
		startManager()
		s.release(ctx)
		s.csvGone(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		rec := s.record(ctx)
		Expect(rec.Status.DeletionRevision).To(Equal(revision))
		Expect(rec.Status.DeletionRevisionFrom).To(Equal(cleanupv1alpha1.RevisionFromWatch))
		Expect(rec.Status.Kept).To(ConsistOf(cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: s.ns("a"), Name: "w-after", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion}))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w-after"))
	})
})

var _ = Describe("A custom resource created in the second of a ClusterExtension's deletion", func() {
	It("is told apart after csv-cleaner was stopped across the deletion, by the revision found after the fact", func(ctx SpecContext) {
		for try := range 4 {
			if running == nil {
				startManager()
			}
			s := newExtScenario(fmt.Sprintf("xsec%d", try))
			s.createPolicy(ctx)
			s.create(ctx)
			stopManager()
			fixtures.WaitNextSecond(time.Now())
			time.Sleep(300 * time.Millisecond)
			s.resource(ctx, s.ns("a"), "before")
			created := s.lastResource
			time.Sleep(100 * time.Millisecond)
			s.deleteAsOperatorController(ctx, nil)
			time.Sleep(100 * time.Millisecond)
			s.resource(ctx, s.ns("a"), "after")
			ext := &ocv1.ClusterExtension{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext)).To(Succeed())
			if !created.Equal(ext.DeletionTimestamp.Time) || !s.lastResource.Equal(ext.DeletionTimestamp.Time) {
				GinkgoWriter.Printf("try %d: the resources and the deletion fell in two seconds; trying again\n", try)
				continue
			}
			startManager()
			Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
			rec := s.record(ctx)
			Expect(rec.Status.DeletionRevisionFrom).To(Equal(cleanupv1alpha1.RevisionFromSearch))
			Expect(rec.Status.Kept).To(ContainElement(cleanupv1alpha1.ObjectRef{Kind: s.ext.CRDs[0].Kind + "." + s.ext.CRDs[0].Group,
				Namespace: s.ns("a"), Name: "after", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion}))
			Expect(s.resources(ctx)).To(ConsistOf(s.ns("a") + "/after"))
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, s.objs.CRDs[0]))).To(Succeed()) })
			return
		}
		Fail("the resources and the extension's deletion never fell in one second")
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

// revisionSourceSearch is the revision label of the lookups metric for a revision found after the fact.
const revisionSourceSearch = "search"

// lookups sums csv_cleaner_deletion_second_lookups_total of this process for a revision source.
func lookups(source string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "csv_cleaner_deletion_second_lookups_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "revision") == source {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
