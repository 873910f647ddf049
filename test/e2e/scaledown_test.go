//go:build e2e

package e2e_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var scaleDown = samplePackage("scale-down")

var _ = Describe("Scale-down-then-delete", func() {
	It("completes the uninstall once csv-cleaner is back, sparing what is not the operator's", func(ctx SpecContext) {
		in := newInstall(scaleDown)
		in.create(ctx)
		other := fixtures.CRD{Group: "other-" + in.id + ".example.com", Kind: "Gadget", Plural: "gadgets"}
		Expect(fixtures.CreateCRD(ctx, kc.Client, fixtures.Install{}.CRDObject(other))).To(Succeed())
		for _, ns := range []string{in.ns("a"), in.ns("b"), in.ns("out")} {
			in.widget(ctx, ns, "w1")
		}
		in.widget(ctx, in.ns("a"), "w2")
		gadget := fixtures.Operand(other, in.ns("a"), "g1")
		Expect(kc.Client.Create(ctx, gadget)).To(Succeed())

		By("scaling csv-cleaner to zero and deleting the CSV")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		in.uninstall(ctx)

		By("the CSV stays, deleting and held by csv-cleaner's finalizer, and no operand is gone")
		everything := append(in.installed(in.ns("a")+"/w1", in.ns("a")+"/w2", in.ns("b")+"/w1", in.ns("out")+"/w1"),
			"CRD "+other.Name(), "Gadget "+in.ns("a")+"/g1")
		Consistently(func(g Gomega, ctx context.Context) {
			csv, err := in.getCSV(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(csv.DeletionTimestamp).NotTo(BeNil())
			g.Expect(csv.Finalizers).To(ContainElement(decide.DefaultFinalizer))
			g.Expect(withoutClusterRBAC(in.remaining(ctx, other))).To(ConsistOf(withoutClusterRBAC(everything)))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())

		By("scaling csv-cleaner up: the uninstall completes")
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx, other) }).WithContext(ctx).Should(ConsistOf(
			"CRD "+in.crd().Name(), "Widget "+in.ns("out")+"/w1", // outside the targets
			"CRD "+other.Name(), "Gadget "+in.ns("a")+"/g1", // another operator's
		), "the garbage collector removes the Deployment and ServiceAccount once the CSV is gone")
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", in.crd().Kind+"."+in.crd().Group), HaveField("Deleted", int32(3)), HaveField("Remaining", int32(0)))))
		Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, gadget))).To(Succeed())
	})
})

// withoutClusterRBAC drops the cluster RBAC entries. They come and go while
// the CSV is deleting, whether csv-cleaner runs or not: OLM's own finalizer
// deletes them at once, and OLM's catalog operator creates them again from
// the InstallPlan until the garbage collector has removed it.
func withoutClusterRBAC(in []string) []string {
	var out []string
	for _, s := range in {
		if s != "ClusterRoles of the CSV" && s != "ClusterRoleBindings of the CSV" {
			out = append(out, s)
		}
	}
	return out
}
