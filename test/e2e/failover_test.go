//go:build e2e

package e2e_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var failover = samplePackage("failover")

var _ = Describe("Leader failover", func() {
	It("lets the standby complete an uninstall whose leader was killed in the middle", func(ctx SpecContext) {
		Expect(cleaner.Scale(ctx, 2)).To(Succeed())
		in := newInstall(failover)
		in.create(ctx)
		for _, ns := range []string{in.ns("a"), in.ns("b"), in.ns("out")} {
			in.widget(ctx, ns, "w1", hold)
		}
		in.uninstall(ctx)

		By("waiting for the leader to be in the middle of the uninstall, then killing it")
		Eventually(func(g Gomega, ctx context.Context) {
			rec, err := in.record(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseDeleting))
			g.Expect(terminating(ctx, in, in.ns("a"), in.ns("b"))).To(Equal(2))
		}).WithContext(ctx).Should(Succeed())
		killed, err := cleaner.KillLeader(ctx)
		Expect(err).NotTo(HaveOccurred())
		release(ctx, in)

		By("the standby takes the lease and completes the uninstall")
		in.waitCSVGone(ctx)
		leader, err := cleaner.Leader(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(leader).NotTo(Equal(killed))
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).Should(ConsistOf(
			"CRD "+in.crd().Name(), "Widget "+in.ns("out")+"/w1"))
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
	})
})
