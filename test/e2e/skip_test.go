//go:build e2e

package e2e_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

var (
	upgrade   = samplePackage("upgrade", "1.0.0", "2.0.0")
	copied    = samplePackage("copied")
	reinstall = samplePackage("reinstall")
)

var _ = Describe("Deletions that are not uninstalls", func() {
	It("never holds up an upgrade through OLM, and deletes nothing", func(ctx SpecContext) {
		in := newInstall(upgrade)
		in.csv = in.pkg.CSVName("1.0.0")
		in.sub.StartingCSV, in.sub.Manual = in.csv, true
		v1 := in.create(ctx)
		in.widget(ctx, in.ns("a"), "w1")
		in.widget(ctx, in.ns("b"), "w1")
		before := in.remaining(ctx)

		By("approving the upgrade to v2, whose CSV replaces v1")
		start := time.Now()
		Expect(kc.ApproveInstallPlan(ctx, in.sub, in.pkg.CSVName("2.0.0"))).To(Succeed())
		in.waitCSVGone(ctx)
		AddReportEntry("seconds from approving the upgrade to v1 being gone", time.Since(start).Seconds())
		v2 := &install{id: in.id, pkg: in.pkg, sub: in.sub, csv: in.pkg.CSVName("2.0.0")}
		csv, err := kc.WaitForCSVPhase(ctx, v2.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		Expect(csv.Spec.Replaces).To(Equal(v1.Name))

		By("the record of v1 says Skipped, Upgrade, and every operand is there")
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseSkipped) + "/" + cleanupv1alpha1.ReasonUpgrade))
		Eventually(func(ctx context.Context) []string { return v2.remaining(ctx) }).WithContext(ctx).
			Should(Equal(v2.installed(in.ns("a")+"/w1", in.ns("b")+"/w1")))
		Expect(before).To(Equal(in.installed(in.ns("a")+"/w1", in.ns("b")+"/w1")))
		Eventually(func(ctx context.Context) []string { return v2.finalizers(ctx) }).WithContext(ctx).
			Should(ContainElement(decide.DefaultFinalizer))
	})

	It("deletes nothing when OLM deletes copied CSVs because the targets shrink", func(ctx SpecContext) {
		in := newInstall(copied)
		in.sub.Targets = []string{in.ns("a"), in.ns("b"), in.ns("c")}
		in.create(ctx)
		for _, ns := range in.sub.Targets {
			in.widget(ctx, ns, "w1")
		}
		Eventually(func(ctx context.Context) []string { return copies(ctx, in) }).WithContext(ctx).
			Should(ConsistOf(in.ns("a"), in.ns("b"), in.ns("c")))

		By("shrinking the OperatorGroup's targets to one namespace")
		og := in.sub.OperatorGroup()
		Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(og), og)).To(Succeed())
		base := og.DeepCopy()
		og.Spec.TargetNamespaces = []string{in.ns("a")}
		Expect(kc.Client.Patch(ctx, og, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		Eventually(func(ctx context.Context) []string { return copies(ctx, in) }).WithContext(ctx).Should(ConsistOf(in.ns("a")))

		By("every operand stays, the CSV keeps csv-cleaner's finalizer, and no uninstall was recorded")
		Consistently(func(g Gomega, ctx context.Context) {
			g.Expect(in.remaining(ctx)).To(Equal(in.installed(in.ns("a")+"/w1", in.ns("b")+"/w1", in.ns("c")+"/w1")))
			g.Expect(in.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
			records := &cleanupv1alpha1.CSVCleanupList{}
			g.Expect(kc.Client.List(ctx, records)).To(Succeed())
			for _, r := range records.Items {
				g.Expect(r.Spec.CSVName).NotTo(Equal(in.csv), "record %s/%s", r.Namespace, r.Name)
			}
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	})

	// OLM re-creates the CSV on a later Subscription sync; once an install
	// has settled, OLM v0.46.0 did not do so within minutes here, so the
	// spec checks csv-cleaner's part only: it releases the CSV at once and
	// deletes nothing.
	It("deletes nothing when a CSV is deleted while its Subscription tracks it (a reinstall)", func(ctx SpecContext) {
		in := newInstall(reinstall)
		in.create(ctx)
		in.widget(ctx, in.ns("a"), "w1")
		in.widget(ctx, in.ns("b"), "w1")
		uids := widgetUIDs(ctx, in)

		By("deleting the CSV alone: csv-cleaner releases it at once and deletes nothing")
		in.deleteCSV(ctx)
		in.waitPhase(ctx, string(cleanupv1alpha1.PhaseSkipped)+"/"+cleanupv1alpha1.ReasonReinstall)
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Counts).To(BeEmpty(), "nothing counted, nothing deleted")
		Expect(widgetUIDs(ctx, in)).To(Equal(uids))
		in.waitCSVGone(ctx)
		Expect(widgetUIDs(ctx, in)).To(Equal(uids), "the same operands, not re-created ones")
	})
})

// copies lists the namespaces holding a copy of the install's CSV.
func copies(ctx context.Context, in *install) []string {
	list := &operatorsv1alpha1.ClusterServiceVersionList{}
	Expect(kc.Client.List(ctx, list, client.HasLabels{operatorsv1alpha1.CopiedLabelKey})).To(Succeed())
	var out []string
	for _, c := range list.Items {
		if c.Name == in.csv && c.DeletionTimestamp == nil {
			out = append(out, c.Namespace)
		}
	}
	return out
}

// widgetUIDs maps the install's widgets to their UIDs.
func widgetUIDs(ctx context.Context, in *install) map[types.NamespacedName]types.UID {
	GinkgoHelper()
	out := map[types.NamespacedName]types.UID{}
	for _, ns := range append(in.sub.Targets, in.ns("out")) {
		list := widgetList(in)
		Expect(kc.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			out[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = o.GetUID()
		}
	}
	return out
}
