package envtest_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("Bad input", func() {
	It("notes an owned CRD that no longer exists and completes the rest", func(ctx SpecContext) {
		s := newScenario("nocrd")
		gone := fixtures.CRD{Group: "nocrd.example.com", Kind: "Ghost", Plural: "ghosts"}
		s.createPolicy(ctx)
		csv := s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.waitFinalizer(ctx)
		addOwned(ctx, csv, gone.Name(), gone.Kind)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(kept(rec, "Ghost.nocrd.example.com")).To(Equal([]string{"CRDNotFound=0"}))
	})

	It("blocks, deleting nothing, while the target namespaces cannot be known, and goes on once they can", func(ctx SpecContext) {
		s := newScenario("notargets")
		s.createPolicy(ctx)
		csv := s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		By("losing the OperatorGroup and the CSV's olm.targetNamespaces annotation")
		Expect(k8s.Delete(ctx, s.install.OperatorGroup())).To(Succeed())
		base := csv.DeepCopy()
		delete(csv.Annotations, operatorsv1.OperatorGroupTargetsAnnotationKey)
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/TargetNamespacesUnknown")
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "ClusterRole notargets-role", "ClusterRoleBinding notargets-role", "Widget " + s.ns("a") + "/w1"}))
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("olm.targetNamespaces"))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))

		By("annotating the CSV with its targets")
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		base = csv.DeepCopy()
		csv.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] = s.ns("a")
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("blocks on a malformed owned CRD name, deleting nothing", func(ctx SpecContext) {
		s := newScenario("badname")
		s.createPolicy(ctx)
		csv := s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.waitFinalizer(ctx)
		addOwned(ctx, csv, "NotA_CRD", "Bad")
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/MalformedOwnedCRD")
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "Widget " + s.ns("a") + "/w1"}))
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("NotA_CRD"))
		// Let the spec's CSV go.
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Patch(ctx, csv, client.RawPatch("application/json-patch+json", []byte(`[{"op":"remove","path":"/spec/customresourcedefinitions/owned/1"}]`)))).To(Succeed())
		s.csvGone(ctx)
	})

	It("blocks on an owned CRD that is not established, deleting nothing", func(ctx SpecContext) {
		s := newScenario("notest")
		// A second CRD whose kind clashes with the first is never established.
		clash := fixtures.CRD{Group: s.crd(0).Group, Kind: "Widget", Plural: "widgetclones"}
		s.createPolicy(ctx)
		csv := s.create(ctx)
		Expect(k8s.Create(ctx, s.install.CRDObject(clash))).To(Succeed())
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.waitFinalizer(ctx)
		addOwned(ctx, csv, clash.Name(), clash.Kind)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/CRDNotEstablished")
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "Widget " + s.ns("a") + "/w1"}))
		Expect(s.record(ctx).Status.Message).To(ContainSubstring(clash.Name()))
		By("removing the clashing CRD, after which the entry names a CRD that no longer exists")
		Expect(k8s.Delete(ctx, s.install.CRDObject(clash))).To(Succeed())
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})
})
