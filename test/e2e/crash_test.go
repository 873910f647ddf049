//go:build e2e

package e2e_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// hold is the tests' own finalizer: it keeps an object terminating until
// the test releases it, as a slow operator would.
const hold = "e2e.csv-cleaner.io/hold"

var (
	crashIssued  = samplePackage("crash-issued")
	crashWaiting = samplePackage("crash-waiting")
	crashRBAC    = samplePackage("crash-rbac")
)

var _ = Describe("A crash of csv-cleaner", func() {
	DescribeTable("converges to the same end state after a restart",
		func(ctx SpecContext, id string, crashWhen func(context.Context, *install) bool) {
			in := newInstall(id)
			in.create(ctx)
			for _, ns := range []string{in.ns("a"), in.ns("b"), in.ns("out")} {
				in.widget(ctx, ns, "w1", hold)
				in.widget(ctx, ns, "w2", hold)
			}
			holdClusterRBAC(ctx, in)
			in.uninstall(ctx)

			By("killing csv-cleaner with SIGKILL at the chosen point")
			Eventually(func(g Gomega, ctx context.Context) {
				g.Expect(crashWhen(ctx, in)).To(BeTrue(), "the uninstall never reached that point; its record: %s", in.describe(ctx))
			}).WithContext(ctx).Should(Succeed())
			Expect(cleaner.Crash(ctx)).To(Succeed())

			By("restarting it and letting the operands and RBAC finish terminating")
			Expect(cleaner.Scale(ctx, 1)).To(Succeed())
			release(ctx, in)
			in.waitCSVGone(ctx)
			Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).Should(ConsistOf(
				"CRD "+in.crd().Name(), "Widget "+in.ns("out")+"/w1", "Widget "+in.ns("out")+"/w2"))
			rec, err := in.record(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		},
		Entry("right after operand deletion was issued", crashIssued, func(ctx context.Context, in *install) bool {
			return terminating(ctx, in, in.ns("a"), in.ns("b")) > 0
		}),
		Entry("while it waits for operand finalizers", crashWaiting, func(ctx context.Context, in *install) bool {
			rec, err := in.record(ctx)
			return err == nil && rec.Status.Phase == cleanupv1alpha1.PhaseDeleting &&
				terminating(ctx, in, in.ns("a"), in.ns("b")) == 4 && len(rec.Status.Blocking) == 4
		}),
		Entry("during the RBAC step", crashRBAC, func(ctx context.Context, in *install) bool {
			rec, err := in.record(ctx)
			if err != nil {
				return false
			}
			if terminating(ctx, in, in.ns("a"), in.ns("b")) == 4 {
				// Let the operand step finish; the ClusterRoles' hold stays.
				release(ctx, in, "Widget")
			}
			for _, b := range rec.Status.Blocking {
				if b.Kind == "ClusterRole.rbac.authorization.k8s.io" {
					return true
				}
			}
			return false
		}),
	)
})

// terminating counts the install's widgets in the namespaces that are deleting.
func terminating(ctx context.Context, in *install, namespaces ...string) int {
	n := 0
	for _, ns := range namespaces {
		list := widgetList(in)
		Expect(kc.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			if o.GetDeletionTimestamp() != nil {
				n++
			}
		}
	}
	return n
}

// holdClusterRBAC puts the hold finalizer on OLM's ClusterRoles of the CSV.
func holdClusterRBAC(ctx context.Context, in *install) {
	GinkgoHelper()
	roles := &rbacv1.ClusterRoleList{}
	Expect(kc.Client.List(ctx, roles, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(in.csvKey())})).To(Succeed())
	Expect(roles.Items).NotTo(BeEmpty())
	for i := range roles.Items {
		r := &roles.Items[i]
		base := r.DeepCopy()
		controllerutil.AddFinalizer(r, hold)
		Expect(kc.Client.Patch(ctx, r, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	}
}

// release removes the hold finalizer from the install's widgets and OLM's
// ClusterRoles of the CSV (or only from the kinds named).
func release(ctx context.Context, in *install, kinds ...string) {
	GinkgoHelper()
	want := func(k string) bool { return len(kinds) == 0 || contains(kinds, k) }
	var objs []client.Object
	if want("Widget") {
		list := widgetList(in)
		Expect(kc.Client.List(ctx, list)).To(Succeed())
		for i := range list.Items {
			objs = append(objs, &list.Items[i])
		}
	}
	if want("ClusterRole") {
		roles := &rbacv1.ClusterRoleList{}
		Expect(kc.Client.List(ctx, roles, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(in.csvKey())})).To(Succeed())
		for i := range roles.Items {
			objs = append(objs, &roles.Items[i])
		}
	}
	for _, o := range objs {
		if !controllerutil.ContainsFinalizer(o, hold) {
			continue
		}
		patch := client.MergeFromWithOptions(o.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(o, hold)
		Expect(client.IgnoreNotFound(kc.Client.Patch(ctx, o, patch))).To(Succeed())
	}
}

// widgetList is an empty list of the install's widgets.
func widgetList(in *install) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(in.crd().GVK().GroupVersion().WithKind(in.crd().Kind + "List"))
	return list
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
