package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
)

var _ = Describe("An uninstall's record", func() {
	It("shows Deleting, with what the uninstall is about to do, before anything is deleted", func(ctx SpecContext) {
		s := newScenario("ack")
		s.createPolicy(ctx)
		s.installWithOperand(ctx)

		By("watching the CSVCleanup records of the CSV's namespace from before the deletion")
		wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cleanup.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &cleanupv1alpha1.CSVCleanupList{}, client.InNamespace(s.install.Namespace))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()

		s.uninstall(ctx)
		var seen []cleanupv1alpha1.CSVCleanupStatus
		Eventually(func() cleanupv1alpha1.Phase {
			for {
				select {
				case e := <-w.ResultChan():
					if rec, ok := e.Object.(*cleanupv1alpha1.CSVCleanup); ok && e.Type != watch.Deleted && rec.Status.Phase != "" {
						seen = append(seen, rec.Status)
					}
				default:
					if len(seen) == 0 {
						return ""
					}
					return seen[len(seen)-1].Phase
				}
			}
		}).WithContext(ctx).Should(Equal(cleanupv1alpha1.PhaseCompleted))

		first := seen[0]
		Expect(first.Phase).To(Equal(cleanupv1alpha1.PhaseDeleting), "the first phase written")
		Expect(first.Message).To(Equal("Uninstall started: deleting the operands in its target namespaces of 1 owned CRDs (" + s.crd(0).Name() +
			"), then deleting its cluster RBAC, deleting its webhook configurations and keeping its CRDs"))
		Expect(first.Counts).To(BeEmpty(), "written before the operand step")
		Expect(first.StartTime).NotTo(BeNil())
		// The acknowledger and the uninstall both start the record; one of
		// them goes on from what the other wrote, and says so once.
		started := func(ctx context.Context) int { return s.eventCount(ctx, "CleanupStarted") }
		Eventually(started).WithContext(ctx).Should(Equal(1))
		Consistently(started).WithContext(ctx).WithTimeout(2 * time.Second).Should(Equal(1))
	})
})
