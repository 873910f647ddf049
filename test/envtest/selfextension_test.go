package envtest_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/manager"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("csv-cleaner installed by OLM v1 as a ClusterExtension", func() {
	It("holds its own extension, and when it is deleted removes every finalizer it placed, its own extension's last", func(ctx SpecContext) {
		const ns = "cc-self-olmv1"
		By("running csv-cleaner as OLM v1 runs it: POD_NAMESPACE only, no OPERATOR_CONDITION_NAME")
		stopManager()
		DeferCleanup(func() { stopManager(); startManager() })
		startManagerAs(cp.Config, func(o *manager.SetupOptions) { o.Namespace = ns })

		managed := newExtScenario("selfv1")
		managed.createPolicy(ctx)
		managed.create(ctx)

		self := fixtures.Extension{Name: "csv-cleaner-olmv1", Package: olmv1.SelfPackage, Namespace: ns}
		objs, err := self.Create(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		own := func(ctx context.Context) []string {
			ext := &ocv1.ClusterExtension{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: self.Name}, ext); err != nil {
				return nil
			}
			return ext.Finalizers
		}
		DeferCleanup(func(ctx SpecContext) {
			ext := &ocv1.ClusterExtension{}
			if k8s.Get(ctx, client.ObjectKey{Name: self.Name}, ext) == nil {
				base := ext.DeepCopy()
				ext.Finalizers = nil
				Expect(client.IgnoreNotFound(k8s.Patch(ctx, ext, client.MergeFrom(base)))).To(Succeed())
			}
		})
		Eventually(own).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer),
			"no policy selects it, yet csv-cleaner holds the extension that installed it")

		By("deleting csv-cleaner's own ClusterExtension")
		Expect(k8s.Delete(ctx, objs.Extension)).To(Succeed())
		Eventually(own).WithContext(ctx).ShouldNot(ContainElement(decide.DefaultFinalizer))
		Expect(managed.finalizers(ctx)).NotTo(ContainElement(decide.DefaultFinalizer),
			"the managed extension was released before csv-cleaner's own")
		Expect(managed.finalizers(ctx)).To(ContainElements("olm.operatorframework.io/cleanup-unpack-cache"),
			"csv-cleaner let go of the managed extension, it did not uninstall it")
		Expect(own(ctx)).To(ConsistOf("olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-contentmanager-cache"),
			"operator-controller's finalizers are its own to remove")
		events := &eventsv1.EventList{}
		Expect(k8s.List(ctx, events, client.InNamespace("default"))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.Regarding.Kind == ocv1.ClusterExtensionKind && e.Regarding.Name == self.Name {
				reasons = append(reasons, e.Reason)
			}
		}
		Expect(reasons).To(ContainElement("FinalizersReleased"))
	})
})
