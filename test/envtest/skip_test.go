package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Deletions that are not uninstalls: nothing is deleted and the CSV is released at once.
var _ = Describe("A deletion that is not an uninstall", func() {
	// setup installs the scenario with an operand in a target namespace and
	// owned cluster RBAC, and waits for csv-cleaner's finalizer.
	setup := func(ctx SpecContext, s *scenario) []string {
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		waitRBACFinalizers(ctx, s.id+"-role", held)
		return []string{"CRD " + s.crd(0).Name(), "ClusterRole " + s.id + "-role", "ClusterRoleBinding " + s.id + "-role", "Widget " + s.ns("a") + "/w1"}
	}
	setStatus := func(ctx SpecContext, s *scenario, phase operatorsv1alpha1.ClusterServiceVersionPhase, reason operatorsv1alpha1.ConditionReason) {
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		base := csv.DeepCopy()
		csv.Status.Phase, csv.Status.Reason = phase, reason
		Expect(k8s.Status().Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
	}

	It("is an upgrade when OLM marked the CSV Replacing", func(ctx SpecContext) {
		s := newScenario("skip-replacing")
		want := setup(ctx, s)
		setStatus(ctx, s, operatorsv1alpha1.CSVPhaseReplacing, operatorsv1alpha1.CSVReasonBeingReplaced)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal(want))
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseSkipped))
		Expect(rec.Status.Reason).To(Equal(cleanupv1alpha1.ReasonUpgrade))
		Expect(s.eventReasons(ctx)).To(ContainElement("CleanupSkipped"))
	})

	It("is an upgrade when another CSV in the namespace replaces it", func(ctx SpecContext) {
		s := newScenario("skip-replaces")
		want := setup(ctx, s)
		v2 := s.install.CSV()
		v2.Name = s.id + "-operator.v2.0.0"
		v2.Spec.Replaces = s.install.CSVName
		Expect(k8s.Create(ctx, v2)).To(Succeed())
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal(want))
		Expect(s.phase(ctx)).To(Equal("Skipped/Upgrade"))
	})

	It("is a copy when OLM's status says Copied", func(ctx SpecContext) {
		s := newScenario("skip-copied")
		want := setup(ctx, s)
		// Seen live, a CSV marked Copied loses csv-cleaner's finalizer; to see
		// how its deletion is classified, the status and the deletion happen
		// while csv-cleaner is stopped, so it meets the deleting CSV first.
		scaleToZero()
		setStatus(ctx, s, operatorsv1alpha1.CSVPhaseSucceeded, operatorsv1alpha1.CSVReasonCopied)
		s.deleteCSV(ctx)
		startManager()
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal(want))
		Expect(s.phase(ctx)).To(Equal("Skipped/Copied"))
	})

	It("is a reinstall while a Subscription still tracks the CSV", func(ctx SpecContext) {
		s := newScenario("skip-reinstall")
		want := setup(ctx, s)
		sub := &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: s.install.Namespace},
			Spec:       &operatorsv1alpha1.SubscriptionSpec{Package: "widget", Channel: "stable", CatalogSource: "cat", CatalogSourceNamespace: "olm"},
		}
		Expect(k8s.Create(ctx, sub)).To(Succeed())
		base := sub.DeepCopy()
		sub.Status = operatorsv1alpha1.SubscriptionStatus{InstalledCSV: s.install.CSVName, CurrentCSV: s.install.CSVName, LastUpdated: metav1.Now()}
		Expect(k8s.Status().Patch(ctx, sub, client.MergeFrom(base))).To(Succeed())
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal(want))
		Expect(s.phase(ctx)).To(Equal("Skipped/Reinstall"))

		By("OLM re-creating the CSV with a new UID, whose uninstall record starts afresh")
		Expect(k8s.Delete(ctx, sub)).To(Succeed())
		old := s.record(ctx).Status.CSVUID
		csv := s.install.CSV()
		Expect(k8s.Create(ctx, csv)).To(Succeed())
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		rec := s.record(ctx)
		Expect(rec.Status.CSVUID).To(Equal(csv.UID))
		Expect(rec.Status.CSVUID).NotTo(Equal(old))
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("never holds up an upgrade: the CSV goes within seconds", func(ctx SpecContext) {
		s := newScenario("skip-fast")
		setup(ctx, s)
		setStatus(ctx, s, operatorsv1alpha1.CSVPhaseDeleting, operatorsv1alpha1.CSVReasonReplaced)
		s.deleteCSV(ctx)
		Eventually(s.finalizers).WithContext(ctx).WithTimeout(5 * time.Second).ShouldNot(ContainElement(decide.DefaultFinalizer))
		Expect(s.phase(ctx)).To(Equal("Skipped/Upgrade"))
	})
})

var _ = Describe("Operands kept on purpose", func() {
	It("keeps operands of a CSV that opts out with the console's annotation, and still cleans RBAC", func(ctx SpecContext) {
		s := newScenario("optout")
		s.createPolicy(ctx)
		csv := s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		base := csv.DeepCopy()
		csv.Annotations[decide.OptOutAnnotation] = "true"
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/w1"}))
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(kept(rec, "Widget."+s.crd(0).Group)).To(Equal([]string{"OptedOut=1"}))
	})

	It("keeps operands under a policy with operands: Orphan, and still cleans RBAC", func(ctx SpecContext) {
		s := newScenario("orphan")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.Operands = cleanupv1alpha1.Orphan })
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 0, s.ns("b"), "w2")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/w1", "Widget " + s.ns("b") + "/w2"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"PolicyOrphan=2"}))
	})

	It("keeps everything under a policy that orphans RBAC too", func(ctx SpecContext) {
		s := newScenario("orphan-all")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.Operands, p.ClusterRBAC, p.Webhooks = cleanupv1alpha1.Orphan, cleanupv1alpha1.Orphan, cleanupv1alpha1.Orphan
		})
		s.installWithOperand(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "ClusterRole " + s.id + "-role", "ClusterRoleBinding " + s.id + "-role", "Widget " + s.ns("a") + "/w1"}))
	})
})
