//go:build e2e

package e2e_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var apiServerRestart = samplePackage("apiserver-restart")

var _ = Describe("An API server restart", func() {
	It("in the middle of an uninstall: csv-cleaner converges", func(ctx SpecContext) {
		if !kc.Local() {
			Skip("the harness restarts kube-apiserver only on the local cluster")
		}
		By("running csv-cleaner with a renew deadline longer than the restart, so that it keeps its lease")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		cleaner.Args = []string{"--leader-election-lease-duration=60s", "--leader-election-renew-deadline=40s"}
		DeferCleanup(func(ctx SpecContext) {
			cleaner.Args = nil
			Expect(cleaner.Scale(ctx, 0)).To(Succeed())
			Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		})
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		in := newInstall(apiServerRestart)
		in.create(ctx)
		for _, ns := range []string{in.ns("a"), in.ns("b"), in.ns("out")} {
			in.widget(ctx, ns, "w1", hold)
		}
		in.uninstall(ctx)
		Eventually(func(g Gomega, ctx context.Context) {
			g.Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseDeleting) + "/"))
			g.Expect(terminating(ctx, in, in.ns("a"), in.ns("b"))).To(Equal(2))
		}).WithContext(ctx).Should(Succeed())

		By("restarting kube-apiserver")
		Expect(kc.RestartAPIServer(ctx)).To(Succeed())
		Expect(cleaner.Exited()).To(BeZero(), "csv-cleaner reconnects on its own")

		By("letting the operands finish terminating: the uninstall completes")
		release(ctx, in)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).Should(ConsistOf(
			"CRD "+in.crd().Name(), "Widget "+in.ns("out")+"/w1"))
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
	})
})
