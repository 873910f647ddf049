package envtest_test

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

const secondFinalizer = "second.csv-cleaner.io/uninstall"

// freeAddrs are two distinct loopback addresses nothing listens on (a
// metrics and a probe address).
func freeAddrs() (string, string) {
	GinkgoHelper()
	ports, err := controlplane.FreePorts(2)
	Expect(err).NotTo(HaveOccurred())
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
}

var _ = Describe("The csv-cleaner binary", func() {
	It("elects a leader, serves probes and metrics, and runs beside another instance with its own finalizer", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		bin := cleanerBinary(ctx)

		metrics, probes := freeAddrs()
		p, err := controlplane.StartProcess("csv-cleaner", bin, []string{
			"--kubeconfig=" + cp.Kubeconfig, "--leader-elect", "--leader-election-namespace=default",
			"--metrics-bind-address=" + metrics, "--metrics-secure=false", "--health-probe-bind-address=" + probes,
			"--finalizer=" + secondFinalizer, "--operand-role=", // an admin: no operand role to bind
		}, nil, dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if !p.Exited() {
				p.Kill()
			}
		})

		By("holding the leader election lease and answering the probes")
		Eventually(func(g Gomega) {
			lease := &coordinationv1.Lease{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "csv-cleaner.cleanup.csv-cleaner.io"}, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
			g.Expect(*lease.Spec.HolderIdentity).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		for _, path := range []string{"/healthz", "/readyz"} {
			Eventually(func() (int, error) {
				code, _, err := controlplane.HTTPGet(ctx, fmt.Sprintf("http://%s%s", probes, path))
				return code, err
			}).WithContext(ctx).Should(Equal(http.StatusOK), path)
		}

		By("uninstalling a CSV that both instances manage, each with its own finalizer")
		both := newScenario("twoinst")
		both.createPolicy(ctx)
		both.installWithOperand(ctx)
		Eventually(both.finalizers).WithContext(ctx).Should(ConsistOf(decide.DefaultFinalizer, secondFinalizer))
		both.uninstall(ctx)
		Expect(both.remaining(ctx)).To(Equal([]string{"CRD " + both.crd(0).Name()}))
		Expect(both.phase(ctx)).To(Equal("Completed/"))

		By("uninstalling a CSV with the binary alone, which reports it on its metrics endpoint")
		scaleToZero()
		alone := newScenario("oneinst")
		alone.createPolicy(ctx)
		alone.create(ctx)
		alone.operand(ctx, 0, alone.ns("a"), "w1")
		Eventually(alone.finalizers).WithContext(ctx).Should(Equal([]string{secondFinalizer}))
		alone.uninstall(ctx)
		Expect(alone.remaining(ctx)).To(Equal([]string{"CRD " + alone.crd(0).Name()}))
		Eventually(func() (string, error) {
			_, body, err := controlplane.HTTPGet(ctx, fmt.Sprintf("http://%s/metrics", metrics))
			return body, err
		}).WithContext(ctx).Should(ContainSubstring(`csv_cleaner_uninstalls_total{kind="ClusterServiceVersion",reason="",result="completed"}`))

		By("stopping cleanly on SIGTERM")
		Expect(p.Stop(30 * time.Second)).To(Succeed())
	})
})
