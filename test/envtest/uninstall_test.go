package envtest_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("An uninstall", func() {
	It("survives csv-cleaner scaled to zero and deletes exactly the CSV's operands and RBAC", func(ctx SpecContext) {
		s := newScenario("scale")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 0, s.ns("b"), "w2")
		s.operand(ctx, 0, s.ns("outside"), "spared")
		s.ownedRBAC(ctx, "role")
		s.clusterRole(ctx, "unrelated", map[string]string{"app": "other"})
		s.waitFinalizer(ctx)

		By("scaling csv-cleaner to zero and deleting the CSV")
		scaleToZero()
		s.deleteCSV(ctx)
		Consistently(s.remaining).WithContext(ctx).WithTimeout(2 * time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "Widget "+s.ns("b")+"/w2", "ClusterRole "+s.id+"-role"))

		By("scaling csv-cleaner up again")
		startManager()
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{
			"CRD " + s.crd(0).Name(), "ClusterRole " + s.id + "-unrelated", "Widget " + s.ns("outside") + "/spared",
		}))
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Policy).To(Equal(s.id))
		Expect(rec.Status.StartTime).NotTo(BeNil())
		Expect(rec.Status.CompletionTime).NotTo(BeNil())
		Expect(count(rec, "Widget."+s.crd(0).Group)).To(Equal(cleanupv1alpha1.KindCount{
			Kind: "Widget." + s.crd(0).Group, Found: 2, Deleted: 2, Remaining: 0,
			Kept: []cleanupv1alpha1.KeptCount{{Reason: "OutsideTargets", Count: 1}},
		}))
		Expect(count(rec, "ClusterRole.rbac.authorization.k8s.io").Deleted).To(BeEquivalentTo(1))
		Expect(count(rec, "ClusterRoleBinding.rbac.authorization.k8s.io").Deleted).To(BeEquivalentTo(1))
		for _, c := range []string{cleanupv1alpha1.ConditionComplete} {
			Expect(rec.Status.Conditions).To(ContainElement(And(
				HaveField("Type", c), HaveField("Status", metav1.ConditionTrue), HaveField("ObservedGeneration", rec.Generation))))
		}
		Expect(s.eventReasons(ctx)).To(ContainElements("CleanupStarted", "OperandsDeleted", "CleanupCompleted"))
	})

	It("never deletes an operand created after the CSV's deletion", func(ctx SpecContext) {
		s := newScenario("late")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "before")
		s.waitFinalizer(ctx)
		scaleToZero()
		s.deleteCSV(ctx)
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		By("waiting for the clock to pass the deletion's second, then creating an operand")
		Eventually(func() bool { return time.Now().Truncate(time.Second).After(csv.DeletionTimestamp.Time) }).Should(BeTrue())
		s.operand(ctx, 0, s.ns("a"), "after")
		startManager()
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/after"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"CreatedAfterDeletion=1"}))
	})

	It("deletes operands in every namespace when the OperatorGroup targets all namespaces", func(ctx SpecContext) {
		s := newScenario("allns")
		s.install.Targets = []string{""}
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("x"), "w1")
		s.operand(ctx, 0, s.ns("y"), "w2")
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("keeps the instances of a CRD without OLM's provenance, and deletes them when the policy waives the check", func(ctx SpecContext) {
		s := newScenario("unproven")
		s.install.CRDs[0].NoProvenance = true
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/w1"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"Unproven=1"}))

		By("a second install under a policy with crdProvenance: Waived")
		w := newScenario("waived")
		w.install.CRDs[0].NoProvenance = true
		w.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDProvenance = cleanupv1alpha1.ProvenanceWaived })
		w.create(ctx)
		w.operand(ctx, 0, w.ns("a"), "w1")
		w.waitFinalizer(ctx)
		w.uninstall(ctx)
		Expect(w.remaining(ctx)).To(Equal([]string{"CRD " + w.crd(0).Name()}))
	})

	It("spares a namespace that another live CSV owning the same CRD targets", func(ctx SpecContext) {
		s := newScenario("shared")
		s.install.Targets = []string{"a-shared", "common-shared"}
		other := newScenario("shared2")
		other.install.CRDs = s.install.CRDs
		other.install.Targets = []string{"common-shared", "b-shared2"}
		s.createPolicy(ctx)
		other.createPolicy(ctx)
		s.create(ctx)
		other.create(ctx)
		s.operand(ctx, 0, "a-shared", "mine")
		s.operand(ctx, 0, "common-shared", "both")
		s.operand(ctx, 0, "b-shared2", "theirs")
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget b-shared2/theirs", "Widget common-shared/both"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"OutsideTargets=1", "SharedWithCSV=1"}))
	})

	It("finds another owner of the CRD among many CSVs, past the first page of the live listing", func(ctx SpecContext) {
		// CSVs are listed 50 a page, in namespace order: 60 CSVs of other
		// operators sort before the other owner's namespace.
		filler := fixtures.Install{Namespace: "op-a-fillers", Targets: []string{"op-a-fillers"}}
		Expect(k8s.Create(ctx, fixtures.Namespace(filler.Namespace))).To(Succeed())
		for i := range 60 {
			filler.CSVName = fmt.Sprintf("filler-%02d.v1.0.0", i)
			filler.CRDs = []fixtures.CRD{{Group: fmt.Sprintf("filler%02d.example.com", i), Kind: "Filler", Plural: "fillers"}}
			Expect(k8s.Create(ctx, filler.CSV())).To(Succeed())
		}
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8s.DeleteAllOf(ctx, &operatorsv1alpha1.ClusterServiceVersion{}, client.InNamespace(filler.Namespace))).To(Succeed())
		})
		s := newScenario("paged")
		s.install.Targets = []string{"a-paged", "common-paged"}
		other := newScenario("zz-paged")
		other.install.CRDs = s.install.CRDs
		other.install.Targets = []string{"common-paged"}
		s.createPolicy(ctx)
		s.create(ctx)
		other.create(ctx)
		s.operand(ctx, 0, "a-paged", "mine")
		s.operand(ctx, 0, "common-paged", "both")
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget common-paged/both"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"SharedWithCSV=1"}))
	})

	It("deletes cluster-scoped operands only when no other live CSV owns their CRD", func(ctx SpecContext) {
		s := newScenario("gizmo")
		s.install.CRDs = []fixtures.CRD{{Group: "cluster.example.com", Kind: "Gizmo", Plural: "gizmos", ClusterScoped: true}}
		other := newScenario("gizmo2")
		other.install.CRDs = s.install.CRDs
		s.createPolicy(ctx)
		other.createPolicy(ctx)
		s.create(ctx)
		other.create(ctx)
		s.operand(ctx, 0, "", "gizmo-g1")
		other.waitFinalizer(ctx)
		s.waitFinalizer(ctx)

		By("uninstalling the first CSV while the second owns the CRD too")
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD gizmos.cluster.example.com", "Gizmo gizmo-g1"}))
		Expect(kept(s.record(ctx), "Gizmo.cluster.example.com")).To(Equal([]string{"SharedClusterScoped=1"}))

		By("uninstalling the last owner")
		other.uninstall(ctx)
		Expect(other.remaining(ctx)).To(Equal([]string{"CRD gizmos.cluster.example.com"}))
	})

	It("deletes only cluster objects with all three owner labels: not OperatorGroup roles, aggregate roles or another namespace's CSV", func(ctx SpecContext) {
		s := newScenario("labels")
		s.createPolicy(ctx)
		s.create(ctx)
		s.ownedRBAC(ctx, "owned")
		key := s.install.Key()
		s.clusterRole(ctx, "name-only", map[string]string{rbac.OwnerKey: key.Name})
		s.clusterRole(ctx, "no-kind", map[string]string{rbac.OwnerKey: key.Name, rbac.OwnerNamespaceKey: key.Namespace})
		s.clusterRole(ctx, "other-ns", map[string]string{rbac.OwnerKey: key.Name, rbac.OwnerNamespaceKey: "elsewhere", rbac.OwnerKindKey: "ClusterServiceVersion"})
		s.clusterRole(ctx, "og-admin", map[string]string{rbac.OwnerKey: s.install.OperatorGroupName(), rbac.OwnerNamespaceKey: key.Namespace, rbac.OwnerKindKey: "OperatorGroup"})
		s.clusterRole(ctx, "widgets-v1-admin", nil)
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{
			"CRD " + s.crd(0).Name(),
			"ClusterRole labels-name-only", "ClusterRole labels-no-kind", "ClusterRole labels-og-admin",
			"ClusterRole labels-other-ns", "ClusterRole labels-widgets-v1-admin",
		}))
	})

	It("deletes the webhook configurations OLM made for the CSV", func(ctx SpecContext) {
		s := newScenario("hooks")
		s.createPolicy(ctx)
		s.create(ctx)
		owner := rbac.OwnerLabels(s.install.Key())
		hook := func(name string) []admissionregistrationv1.ValidatingWebhook {
			return []admissionregistrationv1.ValidatingWebhook{{
				Name: name + ".hooks.example.com", SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}, FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"hooks.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}}}},
			}}
		}
		mhook := func(name string) []admissionregistrationv1.MutatingWebhook {
			v := hook(name)[0]
			return []admissionregistrationv1.MutatingWebhook{{Name: v.Name, SideEffects: v.SideEffects, AdmissionReviewVersions: v.AdmissionReviewVersions,
				FailurePolicy: v.FailurePolicy, ClientConfig: v.ClientConfig, Rules: v.Rules}}
		}
		Expect(k8s.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks-owned", Labels: owner}, Webhooks: hook("v")})).To(Succeed())
		Expect(k8s.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks-owned", Labels: owner}, Webhooks: mhook("m")})).To(Succeed())
		Expect(k8s.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks-other"}, Webhooks: hook("o")})).To(Succeed())
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "ValidatingWebhookConfiguration hooks-other"}))
	})

	It("deletes CRDs only with crds: Delete, and only those with no instances left", func(ctx SpecContext) {
		s := newScenario("crds")
		s.install.CRDs = append(s.install.CRDs, fixtures.CRD{Group: "crds.example.com", Kind: "Gadget", Plural: "gadgets"})
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 1, s.ns("outside"), "g-spared")
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD gadgets.crds.example.com", "Gadget outside-crds/g-spared"}))
		Expect(kept(s.record(ctx), "CustomResourceDefinition.apiextensions.k8s.io")).To(Equal([]string{"HasInstances=1"}))
	})
})
