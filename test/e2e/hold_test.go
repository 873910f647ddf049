//go:build e2e

package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	holdOn     = samplePackage("hold-on")
	holdOff    = samplePackage("hold-off")
	foreground = samplePackage("foreground")
)

// ownedClusterRBAC is the metadata of OLM's ClusterRoles and bindings of the install's CSV.
func ownedClusterRBAC(ctx context.Context, in *install) []metav1.PartialObjectMetadata {
	GinkgoHelper()
	var out []metav1.PartialObjectMetadata
	for _, gvk := range rbac.HeldKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		Expect(kc.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(in.csvKey())})).To(Succeed())
		out = append(out, list.Items...)
	}
	return out
}

// fieldsWrittenBy returns, for each of OLM's ClusterRoles and bindings of
// the install's CSV, the fields that the API server records as written by
// manager (metadata.managedFields), as JSON.
func fieldsWrittenBy(ctx context.Context, in *install, manager string) []string {
	GinkgoHelper()
	var out []string
	for _, o := range ownedClusterRBAC(ctx, in) {
		for _, m := range o.ManagedFields {
			if m.Manager == manager {
				out = append(out, m.FieldsV1.GetRawString())
			}
		}
	}
	return out
}

// clusterRBACState is "live", "live, held", "terminating" or "terminating,
// held" for each of OLM's ClusterRoles and bindings of the CSV.
func clusterRBACState(ctx context.Context, in *install) []string {
	var out []string
	for _, o := range ownedClusterRBAC(ctx, in) {
		state := "live"
		if o.DeletionTimestamp != nil {
			state = "terminating"
		}
		if slices.Contains(o.Finalizers, rbac.HoldFinalizer) {
			state += ", held"
		}
		out = append(out, state)
	}
	return out
}

// operatorLog is the sample operator's log so far.
func operatorLog(in *install) string {
	b, _ := os.ReadFile(filepath.Join(kc.LogDir, "sample-operator-"+in.id+".log"))
	return string(b)
}

// uninstallWhileOLMRemovesRBAC deletes the Subscription and, once the
// garbage collector has removed its InstallPlan (from which OLM's catalog
// operator would create the RBAC again), the CSV, with csv-cleaner scaled
// to zero. It waits until OLM's own finalizer has deleted the CSV's cluster
// RBAC and scales csv-cleaner up again: its operand deletes then come after
// OLM's RBAC deletes, as they can in any uninstall.
func uninstallWhileOLMRemovesRBAC(ctx context.Context, in *install, rbacState ...string) {
	GinkgoHelper()
	Expect(cleaner.Scale(ctx, 0)).To(Succeed())
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: in.sub.Namespace, Name: in.pkg.Name}}
	Expect(kc.Client.Delete(ctx, sub)).To(Succeed())
	Eventually(func(g Gomega, ctx context.Context) {
		plans := &operatorsv1alpha1.InstallPlanList{}
		g.Expect(kc.Client.List(ctx, plans, client.InNamespace(in.sub.Namespace))).To(Succeed())
		g.Expect(plans.Items).To(BeEmpty())
	}).WithContext(ctx).Should(Succeed())
	in.deleteCSV(ctx)
	Eventually(func(ctx context.Context) []string { return clusterRBACState(ctx, in) }).WithContext(ctx).
		Should(ConsistOf(rbacState), "OLM's finalizer deletes the CSV's cluster RBAC at once")
	Expect(cleaner.Scale(ctx, 1)).To(Succeed())
}

var _ = Describe("The RBAC hold, with an operator that finalizes its operands cluster-wide", func() {
	It("keeps OLM's RBAC in force until the operator has finalized its operands", func(ctx SpecContext) {
		in := newInstall(holdOn)
		in.create(ctx)
		Eventually(func(ctx context.Context) []string { return clusterRBACState(ctx, in) }).WithContext(ctx).
			Should(HaveEach("live, held"))
		startClusterOperator(in)
		finalizedWidgetsIn(ctx, in, in.ns("a"), in.ns("b"))

		uninstallWhileOLMRemovesRBAC(ctx, in, "terminating, held", "terminating, held")
		Expect(fieldsWrittenBy(ctx, in, "csv-cleaner")).To(HaveEach(Equal(`{"f:metadata":{"f:finalizers":{".":{},"v:\"`+rbac.HoldFinalizer+`\"":{}}}}`)),
			"csv-cleaner wrote nothing but its finalizer")
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD " + in.crd().Name()))
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
		Expect(operatorLog(in)).NotTo(ContainSubstring("forbidden"))
	})

	It("without the hold, the operator loses its rights and its operands hang", func(ctx SpecContext) {
		cleaner.Args = []string{"--rbac-hold=false"}
		DeferCleanup(func(ctx SpecContext) {
			cleaner.Args = nil
			Expect(cleaner.Scale(ctx, 0)).To(Succeed())
			Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		})
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		in := newInstall(holdOff)
		in.create(ctx)
		Expect(clusterRBACState(ctx, in)).To(HaveEach("live"))
		startClusterOperator(in)
		finalizedWidgetsIn(ctx, in, in.ns("a"), in.ns("b"))

		uninstallWhileOLMRemovesRBAC(ctx, in)
		Eventually(func() string { return operatorLog(in) }).WithContext(ctx).Should(ContainSubstring("is forbidden"),
			"the API server refuses the operator's finalizer removal")
		Eventually(func(ctx context.Context) []cleanupv1alpha1.ObjectRef {
			rec, err := in.record(ctx)
			Expect(err).NotTo(HaveOccurred())
			return rec.Status.Blocking
		}).WithContext(ctx).Should(HaveLen(4))
		Consistently(func(g Gomega, ctx context.Context) {
			rec, err := in.record(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseDeleting))
			g.Expect(rec.Status.Blocking).To(HaveLen(4))
			g.Expect(rec.Status.Blocking).To(HaveEach(HaveField("Finalizers", []string{sampleFinalizer})))
			g.Expect(terminating(ctx, in, in.ns("a"), in.ns("b"))).To(Equal(4))
		}).WithContext(ctx).WithTimeout(3*time.Second).Should(Succeed(), "the operands hang")

		By("ending it: onTimeout RemoveFinalizers")
		setOnTimeout(ctx, in, cleanupv1alpha1.TimeoutRemoveFinalizers)
		in.waitCSVGone(ctx)
	})

	It("reports a foreground deletion's missing operator as OperatorUnavailable, then follows onTimeout", func(ctx SpecContext) {
		in := newInstall(foreground)
		in.create(ctx)
		op := startClusterOperator(in)
		finalizedWidgetsIn(ctx, in, in.ns("a"))

		By("deleting the CSV in the foreground, as the console does, while csv-cleaner is scaled to zero")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: in.sub.Namespace, Name: in.pkg.Name}}
		Expect(kc.Client.Delete(ctx, sub)).To(Succeed())
		csv, err := in.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		// Widgets created in the deletion's second would be kept (CreatedAfterDeletion).
		fixtures.WaitNextSecond(in.lastOperand.Time)
		Expect(kc.Client.Delete(ctx, csv, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, client.ObjectKey{Namespace: in.sub.Namespace, Name: fixtures.SampleServiceAccount}, &appsv1.Deployment{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the garbage collector deletes the Deployment first")
		// The operator's pods went with the Deployment; so does its process here.
		Expect(op.Stop(10 * time.Second)).To(Succeed())
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())

		in.waitPhase(ctx, string(cleanupv1alpha1.PhaseBlocked)+"/"+cleanupv1alpha1.BlockedOperatorUnavailable)
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Message).To(ContainSubstring("Deployment " + in.sub.Namespace + "/" + fixtures.SampleServiceAccount + " is gone"))
		Expect(rec.Status.Blocking).To(HaveLen(2))

		By("onTimeout RemoveFinalizers")
		setOnTimeout(ctx, in, cleanupv1alpha1.TimeoutRemoveFinalizers)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD " + in.crd().Name()))
		Expect(in.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
	})
})

// startClusterOperator runs the sample operator for all namespaces, as the
// install's ServiceAccount: it needs the cluster RBAC OLM made for it.
func startClusterOperator(in *install) *controlplane.Process {
	GinkgoHelper()
	p, err := kc.SampleOperator("sample-operator-"+in.id, in.crd().Group, in.crd().Kind,
		in.sub.Namespace+"/"+fixtures.SampleServiceAccount)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = p.Stop(10 * time.Second) })
	return p
}

// setOnTimeout changes the install's policy to act on timeout at once.
func setOnTimeout(ctx context.Context, in *install, action cleanupv1alpha1.TimeoutAction) {
	GinkgoHelper()
	p := &cleanupv1alpha1.CleanupPolicy{}
	Expect(kc.Client.Get(ctx, client.ObjectKey{Name: in.id}, p)).To(Succeed())
	base := p.DeepCopy()
	p.Spec.OnTimeout = action
	p.Spec.OperandTimeout = &metav1.Duration{Duration: time.Second}
	Expect(kc.Client.Patch(ctx, p, client.MergeFrom(base))).To(Succeed())
}
