package envtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/faultproxy"
)

var _ = Describe("A ClusterExtension's uninstall (OLM v1)", func() {
	// Each resource gets the sample operator's finalizer before the uninstall.
	finalized := func(ctx context.Context, s *extScenario, names ...[2]string) {
		GinkgoHelper()
		for _, n := range names {
			s.resource(ctx, n[0], n[1])
		}
		Eventually(func(ctx context.Context) int {
			list := &unstructured.UnstructuredList{}
			gvk := s.ext.CRDs[0].GVK()
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			Expect(k8s.List(ctx, list)).To(Succeed())
			n := 0
			for _, u := range list.Items {
				if len(u.GetFinalizers()) == 1 && u.GetFinalizers()[0] == sampleFinalizer {
					n++
				}
			}
			return n
		}).WithContext(ctx).Should(Equal(len(names)))
		s.afterResources()
	}

	It("deletes the custom resources through the running operator first, then lets the garbage collector remove the rest (crds: Delete)", func(ctx SpecContext) {
		s := newExtScenario("xbg")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		s.startSampleOperator()
		finalized(ctx, s, [2]string{s.ns("a"), "one"}, [2]string{s.ns("a"), "two"}, [2]string{s.ns("b"), "three"})

		s.deleteAsOperatorController(ctx, nil)
		// While the resources go, through the operator, everything OLM v1
		// applied stays: the operator needs its Deployment and its RBAC.
		Eventually(s.resources).WithContext(ctx).Should(BeEmpty())
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		rec := s.record(ctx)
		Expect(rec.Status.Cascade).To(Equal(string(olmv1.CascadeBackground)))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", s.ext.CRDs[0].Kind+"."+s.ext.CRDs[0].Group),
			HaveField("Found", BeEquivalentTo(3)), HaveField("Deleted", BeEquivalentTo(3)))))
		Expect(rec.Status.Counts).To(ContainElement(And(HaveField("Kind", decide.CRDKind), HaveField("Found", BeEquivalentTo(1)))))

		By("the garbage collector removing what OLM v1 applied once the extension is released")
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())
		for _, o := range s.objs.Owned() {
			Eventually(present).WithContext(ctx).WithArguments(o).Should(BeFalse(), "%T %s", o, o.GetName())
		}
		Expect(s.extEventReasons(ctx)).To(ContainElements("CleanupStarted", "OperandsDeleted", "CleanupCompleted"))
	})

	It("keeps the CRDs and, with operands: Orphan, every custom resource, without the extension's ownerReference (crds: Orphan)", func(ctx SpecContext) {
		s := newExtScenario("xorph")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.Operands = cleanupv1alpha1.Orphan })
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "kept")
		s.afterResources()

		s.deleteAsOperatorController(ctx, nil)
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())
		Eventually(present).WithContext(ctx).WithArguments(s.objs.Deployment).Should(BeFalse())
		Eventually(present).WithContext(ctx).WithArguments(s.objs.Role).Should(BeFalse())
		// The garbage collector has had its turn: the CRD and the resource stay.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.objs.CRDs[0]), crd)).To(Succeed())
		Expect(crd.DeletionTimestamp).To(BeNil())
		Expect(crd.OwnerReferences).To(BeEmpty())
		Expect(crd.Labels).NotTo(HaveKey(olmv1.ExtensionOwnerKindLabel))
		Expect(crd.Labels).NotTo(HaveKey(olmv1.ExtensionOwnerNameLabel))
		Expect(s.resources(ctx)).To(ConsistOf(s.ns("a") + "/kept"))
		rec := s.record(ctx)
		Expect(rec.Status.Kept).To(ContainElement(And(HaveField("Kind", decide.CRDKind), HaveField("Reason", cleanupv1alpha1.KeepPolicyOrphan))))
		Expect(s.extEventReasons(ctx)).To(ContainElement("CRDDetached"))
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crd))).To(Succeed()) })
	})

	It("deletes nothing for --cascade=orphan, and says why", func(ctx SpecContext) {
		s := newExtScenario("xcasc")
		s.createPolicy(ctx)
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "stays")
		s.afterResources()

		s.deleteAsOperatorController(ctx, ptr.To(metav1.DeletePropagationOrphan))
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseSkipped)))
		rec := s.record(ctx)
		Expect(rec.Status.Reason).To(Equal(cleanupv1alpha1.ReasonOrphanCascade))
		Expect(rec.Status.Cascade).To(Equal(string(olmv1.CascadeOrphan)))
		Expect(rec.Status.Message).To(ContainSubstring("--cascade=orphan"))
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())
		Expect(s.resources(ctx)).To(ConsistOf(s.ns("a") + "/stays"))
		Expect(present(ctx, s.objs.CRDs[0])).To(BeTrue())
		Expect(present(ctx, s.objs.Deployment)).To(BeTrue())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, s.objs.CRDs[0]))).To(Succeed()) })
	})

	It("says that the garbage collector deletes the CRDs now for --cascade=foreground, and still completes", func(ctx SpecContext) {
		s := newExtScenario("xfg")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "one")
		s.afterResources()

		s.deleteAsOperatorController(ctx, ptr.To(metav1.DeletePropagationForeground))
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(s.record(ctx).Status.Cascade).To(Equal(string(olmv1.CascadeForeground)))
		Expect(s.extEventReasons(ctx)).To(ContainElement("ForegroundCascade"))
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())
		Eventually(present).WithContext(ctx).WithArguments(s.objs.CRDs[0]).Should(BeFalse())
	})

	It("puts its finalizer back when operator-controller's merge patch drops it", func(ctx SpecContext) {
		s := newExtScenario("xrace")
		s.createPolicy(ctx)
		s.create(ctx)
		// operator-controller writes its finalizer list from its cache with a
		// merge patch, without a resourceVersion: the list it writes wins.
		ext := &ocv1.ClusterExtension{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext)).To(Succeed())
		base := ext.DeepCopy()
		ext.Finalizers = []string{"olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-contentmanager-cache"}
		Expect(k8s.Patch(ctx, ext, client.MergeFrom(base))).To(Succeed())
		Eventually(s.finalizers).WithContext(ctx).Should(ContainElements(decide.DefaultFinalizer,
			"olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-contentmanager-cache"))
	})

	It("resumes after csv-cleaner was scaled to zero while the extension was deleted", func(ctx SpecContext) {
		s := newExtScenario("xres")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		s.startSampleOperator()
		finalized(ctx, s, [2]string{s.ns("a"), "one"}, [2]string{s.ns("b"), "two"})

		stopManager()
		s.deleteAsOperatorController(ctx, nil)
		// Held by csv-cleaner's finalizer, nothing of the extension goes.
		Consistently(s.resources).WithContext(ctx).WithTimeout(2 * time.Second).Should(HaveLen(2))
		Expect(present(ctx, s.objs.CRDs[0])).To(BeTrue())
		Expect(present(ctx, s.objs.Binding)).To(BeTrue())

		startManager()
		Eventually(s.resources).WithContext(ctx).Should(BeEmpty())
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Eventually(present).WithContext(ctx).WithArguments(s.objs.CRDs[0]).Should(BeFalse())
	})

	It("follows the Boxcutter applier's chain: objects owned by a ClusterObjectSet the extension controls", func(ctx SpecContext) {
		s := newExtScenario("xbox")
		s.ext.Boxcutter = true
		s.createPolicy(ctx)
		s.create(ctx)
		s.startSampleOperator()
		finalized(ctx, s, [2]string{s.ns("a"), "one"})

		s.deleteAsOperatorController(ctx, nil)
		Eventually(s.resources).WithContext(ctx).Should(BeEmpty())
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Eventually(present).WithContext(ctx).WithArguments(s.objs.Deployment).Should(BeFalse())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.objs.CRDs[0]), crd)).To(Succeed())
		Expect(crd.OwnerReferences).To(BeEmpty(), "detached from the ClusterObjectSet (crds: Orphan)")
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crd))).To(Succeed()) })
	})

	It("lets csv-cleaner's own uninstall remove its finalizer from every ClusterExtension, abandoning a deleting one with a Warning Event", func(ctx SpecContext) {
		live, deleting := newExtScenario("xrel1"), newExtScenario("xrel2")
		live.createPolicy(ctx)
		deleting.createPolicy(ctx)
		live.create(ctx)
		deleting.create(ctx)
		deleting.resource(ctx, deleting.ns("a"), "left")
		stopManager()
		deleting.deleteAsOperatorController(ctx, nil)

		rl := owninstall.Releaser{Live: k8s, Writer: k8s, Finalizers: decide.Finalizers{Current: decide.DefaultFinalizer, Legacy: []string{legacyFinalizer}},
			Hold: rbac.HoldFinalizer, Workers: 4, Reporter: "test"}
		released, err := rl.ReleaseOthers(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(released).To(ContainElements(
			And(HaveField("Kind", ocv1.ClusterExtensionKind), HaveField("Name", live.ext.Name), HaveField("Abandoned", BeFalse())),
			And(HaveField("Kind", ocv1.ClusterExtensionKind), HaveField("Name", deleting.ext.Name), HaveField("Abandoned", BeTrue()))))
		Expect(live.finalizers(ctx)).NotTo(ContainElement(decide.DefaultFinalizer))
		Expect(deleting.extEventReasons(ctx)).To(ContainElement("UninstallAbandoned"))
		Eventually(deleting.finalizers).WithContext(ctx).Should(BeNil())
	})

	It("plans an extension's uninstall with `csv-cleaner plan clusterextension NAME`, changing nothing, and the run does what it said", func(ctx SpecContext) {
		s := newExtScenario("xplan")
		s.ext.WatchNamespace = s.ns("a")
		s.createPolicy(ctx)
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "one")
		s.resource(ctx, s.ns("a"), "two")
		s.resource(ctx, s.ns("b"), "outside")
		s.afterResources()
		kind := s.ext.CRDs[0].Kind + "." + s.ext.CRDs[0].Group
		stopManager()

		var stdout, stderr bytes.Buffer
		sa := planIdentity(ctx, s.id, s.ext.CRDs[0].Group)
		cmd := exec.CommandContext(ctx, cleanerBinary(ctx), "plan", "clusterextension", s.ext.Name, "-o", "json", "--kubeconfig", cp.Kubeconfig, "--service-account", sa.String())
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Run()).To(Succeed(), stderr.String())
		var dry dryrun.DryRun
		Expect(json.Unmarshal(stdout.Bytes(), &dry)).To(Succeed())
		Expect(dry.Owner).To(Equal(decide.Owner{Kind: decide.KindExtension, Name: s.ext.Name}))
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall))
		Expect(dry.Refusals).To(BeEmpty())
		Expect(dry.Items).To(ConsistOf(
			dryrun.DryRunItem{Action: decide.ActionDelete, Kind: kind, Namespace: s.ns("a"), Name: "one", Reason: decide.DeleteOwnedOperand},
			dryrun.DryRunItem{Action: decide.ActionDelete, Kind: kind, Namespace: s.ns("a"), Name: "two", Reason: decide.DeleteOwnedOperand},
			dryrun.DryRunItem{Action: decide.ActionKeep, Kind: kind, Namespace: s.ns("b"), Name: "outside", Reason: cleanupv1alpha1.KeepOutsideTargets},
			dryrun.DryRunItem{Action: decide.ActionKeep, Kind: decide.CRDKind, Name: s.objs.CRDs[0].Name, Reason: cleanupv1alpha1.KeepPolicyOrphan},
		))
		Expect(s.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer), "the plan changed nothing")
		Expect(s.resources(ctx)).To(HaveLen(3))

		By("running the uninstall: what the plan deleted is gone, what it kept stays")
		startManager()
		s.deleteAsOperatorController(ctx, nil)
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(s.resources(ctx)).To(ConsistOf(s.ns("b") + "/outside"))
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())
		Expect(present(ctx, s.objs.CRDs[0])).To(BeTrue())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, s.objs.CRDs[0]))).To(Succeed()) })
	})

	It("completes a record left Releasing when the release's reply was lost and the extension is gone", func(ctx SpecContext) {
		s := newExtScenario("xlost")
		s.createPolicy(ctx)
		s.create(ctx)
		stopManager()
		By("a record that says Releasing, and the finalizer's removal done, as a lost reply leaves them")
		uid := s.objs.Extension.UID
		rec := &cleanupv1alpha1.ExtensionCleanup{ObjectMeta: metav1.ObjectMeta{Name: s.ext.Name},
			Spec: cleanupv1alpha1.ExtensionCleanupSpec{ClusterExtensionName: s.ext.Name}}
		Expect(k8s.Create(ctx, rec)).To(Succeed())
		rec.Status.ExtensionUID, rec.Status.Phase, rec.Status.StartTime = uid, cleanupv1alpha1.PhaseReleasing, ptr.To(metav1.Now())
		Expect(k8s.Status().Update(ctx, rec)).To(Succeed())
		s.deleteAsOperatorController(ctx, nil)
		ext := &ocv1.ClusterExtension{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext)).To(Succeed())
		base := ext.DeepCopy()
		ext.Finalizers = slices.DeleteFunc(ext.Finalizers, func(f string) bool { return f == decide.DefaultFinalizer })
		Expect(k8s.Patch(ctx, ext, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		Eventually(s.finalizers).WithContext(ctx).Should(BeNil())

		startManager()
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(s.record(ctx).Status.ExtensionUID).To(Equal(uid))
	})

	It("shows failures that go on in the ExtensionCleanup, with one Warning Event, and clears them once an attempt succeeds", func(ctx SpecContext) {
		s := newExtScenario("xretry")
		s.createPolicy(ctx)
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "one")
		s.afterResources()
		proxy := behindProxy(faultproxy.Rates{})
		Eventually(s.finalizers).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))
		beforeErrors := reconcileErrors("clusterextension")
		By("failing every list of the extension's custom resources with 500")
		lift := proxy.Add(faultproxy.Rule{Match: onPath(http.MethodGet, "/"+s.ext.CRDs[0].Group+"/", "/gadgets"), Fault: faultproxy.Refused500, Times: 1 << 30})
		s.deleteAsOperatorController(ctx, nil)
		retrying := func(ctx context.Context) *metav1.Condition {
			if rec := s.record(ctx); rec != nil {
				return meta.FindStatusCondition(rec.Status.Conditions, cleanupv1alpha1.ConditionRetrying)
			}
			return nil
		}
		Eventually(retrying).WithContext(ctx).Should(And(HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", ContainSubstring("attempts in a row failed, the last in step operands"))))
		Expect(s.resources(ctx)).To(HaveLen(1))
		Expect(s.extEventReasons(ctx)).To(ContainElement("Retrying"))
		Expect(reconcileErrors("clusterextension")-beforeErrors).To(BeNumerically(">=", cleanup.RetryingAfter),
			"controller-runtime counts each failed attempt, where operators look")

		By("letting the lists through again")
		lift()
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(retrying(ctx)).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "Succeeded")))
		Expect(slices.DeleteFunc(s.extEventReasons(ctx), func(r string) bool { return r != "Retrying" })).To(HaveLen(1), "one Warning Event for the whole streak")
		Expect(s.resources(ctx)).To(BeEmpty())
	})
})
