package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	csvctl "github.com/csv-cleaner/csv-cleaner/pkg/csv"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// backupTo is a policy's backup with Velero in namespace.
func backupTo(namespace string) func(*cleanupv1alpha1.CleanupPolicySpec) {
	return func(p *cleanupv1alpha1.CleanupPolicySpec) {
		p.Backup = &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: namespace}}
	}
}

// backupName is the name of the Backup that gates the scenario's uninstall.
func (s *scenario) backupName(ctx context.Context) string {
	GinkgoHelper()
	csv, err := s.getCSV(ctx)
	Expect(err).NotTo(HaveOccurred())
	return plan.BackupName("ClusterServiceVersion", csv.Namespace, csv.Name, csv.UID)
}

// applyVeleroRole applies manifests/velero/role.yaml in namespace (the
// file's is velero), for the rest of the spec.
func applyVeleroRole(ctx context.Context, namespace string) {
	GinkgoHelper()
	role, binding, err := fixtures.ShippedVeleroRole()
	Expect(err).NotTo(HaveOccurred())
	Expect(role.Namespace).To(Equal("velero"))
	Expect(binding.Subjects).To(Equal([]rbacv1.Subject{deployedSubject}))
	for _, rule := range role.Rules {
		Expect(rule.Verbs).NotTo(ContainElement("*"))
		Expect(rule.Resources).NotTo(ContainElement("*"))
	}
	role.Namespace, binding.Namespace = namespace, namespace
	Expect(k8s.Create(ctx, role)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, role))).To(Succeed())
	})
}

// Velero's CRDs are installed by the first spec, part way: the specs run in order.
var _ = Describe("The backup gate (a Velero Backup before the first delete)", Ordered, func() {
	It("blocks, deleting nothing, while Velero is not installed; once it is, backs up, verifies, deletes and says how to undo", func(ctx SpecContext) {
		s := newScenario("bkfirst")
		s.createPolicy(ctx, backupTo("velero-first"))
		s.installWithOperand(ctx)
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupUnavailable)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("Velero's CRDs (velero.io/v1) are not installed"))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role", "ClusterRoleBinding "+s.id+"-role"))

		By("installing Velero")
		v := startFakeVelero(ctx, "velero-first", "Available")
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))

		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).NotTo(BeNil())
		Expect(*rec.Status.Backup).To(And(HaveField("Tool", "Velero"), HaveField("Namespace", "velero-first"), HaveField("Name", name),
			HaveField("Phase", plan.BackupPhaseCompleted), HaveField("Verified", true),
			// the operand, the ClusterRole and its binding
			HaveField("Planned", BeEquivalentTo(3)), HaveField("Items", BeNumerically(">=", 3))))
		Expect(rec.Status.Message).To(ContainSubstring("velero restore create --from-backup " + name + " --namespace velero-first"))
		Expect(s.eventReasons(ctx)).To(ContainElements("BackupCreated", "BackupVerified", "CleanupCompleted"))

		By("the Backup holding what was deleted, as its resource list says")
		backups := v.backups(ctx)
		Expect(backups).To(HaveLen(1))
		spec := backups[0].Object["spec"].(map[string]any)
		// the CSV's target namespaces, made before the Widgets were listed (only a holds one)
		Expect(spec["includedNamespaces"]).To(ConsistOf(s.ns("a"), s.ns("b")))
		Expect(spec["includedResources"]).To(ConsistOf("widgets."+s.crd(0).Group, "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io"))
		Expect(spec["includeClusterResources"]).To(BeTrue())
		list := v.list(name)
		Expect(list[s.crd(0).Group+"/v1/Widget"]).To(ConsistOf(s.ns("a") + "/w1"))
		Expect(list["rbac.authorization.k8s.io/v1/ClusterRole"]).To(ContainElement(s.id + "-role"))
		Expect(list["apiextensions.k8s.io/v1/CustomResourceDefinition"]).To(ContainElement(s.crd(0).Name()))
	})

	It("blocks on a Backup that fails, deleting nothing, and makes it again once the failed one is deleted", func(ctx SpecContext) {
		s := newScenario("bkfail")
		s.createPolicy(ctx, backupTo("velero-fail"))
		v := startFakeVelero(ctx, "velero-fail", "Available")
		v.endIn(plan.BackupPhasePartiallyFailed)
		s.installWithOperand(ctx)
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupFailed)
		rec := s.record(ctx)
		Expect(rec.Status.Message).To(ContainSubstring("Velero's Backup " + name + " is PartiallyFailed"))
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Phase", plan.BackupPhasePartiallyFailed), HaveField("Verified", false))))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))

		By("deleting the failed Backup, once its cause is fixed")
		v.endIn(plan.BackupPhaseCompleted)
		v.deleteBackup(ctx, name)
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(v.backups(ctx)).To(HaveLen(1))
		Expect(s.record(ctx).Status.Backup).To(HaveValue(HaveField("Verified", true)))
	})

	It("blocks on a completed Backup whose resource list lacks an object the uninstall would delete", func(ctx SpecContext) {
		s := newScenario("bkmiss")
		s.createPolicy(ctx, backupTo("velero-miss"))
		v := startFakeVelero(ctx, "velero-miss", "Available")
		s.installWithOperand(ctx)
		s.operand(ctx, 0, s.ns("b"), "w2")
		v.leave(s.ns("b") + "/w2")
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupIncomplete)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("Widget " + s.ns("b") + "/w2"))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "Widget "+s.ns("b")+"/w2", "ClusterRole "+s.id+"-role"))

		By("making the Backup again, whole")
		v.leave("")
		v.deleteBackup(ctx, name)
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("blocks, making no Backup, while the storage location is not Available", func(ctx SpecContext) {
		s := newScenario("bkbsl")
		s.createPolicy(ctx, backupTo("velero-bsl"))
		v := startFakeVelero(ctx, "velero-bsl", "Unavailable")
		s.installWithOperand(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupUnavailable)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring(`is "Unavailable", not Available`))
		Consistently(func(ctx context.Context) []unstructured.Unstructured { return v.backups(ctx) }).WithContext(ctx).WithTimeout(time.Second).Should(BeEmpty())
		Expect(s.remaining(ctx)).To(ContainElement("Widget " + s.ns("a") + "/w1"))

		v.setLocation(ctx, "Available")
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("makes no Backup when the uninstall deletes nothing, and completes", func(ctx SpecContext) {
		s := newScenario("bknone")
		s.createPolicy(ctx, backupTo("velero-none"), func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.Operands, p.ClusterRBAC, p.Webhooks = cleanupv1alpha1.Orphan, cleanupv1alpha1.Orphan, cleanupv1alpha1.Orphan
		})
		v := startFakeVelero(ctx, "velero-none", "Available")
		s.installWithOperand(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(ContainElements("Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))
		Expect(v.backups(ctx)).To(BeEmpty())
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Name", ""), HaveField("Planned", BeZero()))))
		Expect(rec.Status.Message).NotTo(ContainSubstring("velero restore"))
	})

	It("does not wait on the Backup of kinds that turn out to have no instance, and completes", func(ctx SpecContext) {
		s := newScenario("bkempty")
		s.createPolicy(ctx, backupTo("velero-empty"), func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.ClusterRBAC, p.Webhooks = cleanupv1alpha1.Orphan, cleanupv1alpha1.Orphan
		})
		v := startFakeVelero(ctx, "velero-empty", "Available")
		v.endIn("") // a Backup made runs for good: the uninstall must not wait on it
		s.create(ctx)
		s.waitFinalizer(ctx)
		name := s.backupName(ctx)
		s.uninstall(ctx)
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Name", name), HaveField("Planned", BeZero()))))
		Expect(rec.Status.Message).NotTo(ContainSubstring("velero restore"))
		Expect(v.backups(ctx)).To(HaveLen(1)) // made before the instances were listed, of the Widgets in the CSV's targets
	})

	It("makes one Backup across a restart while it runs, and keeps an operand created meanwhile", func(ctx SpecContext) {
		s := newScenario("bkrestart")
		s.createPolicy(ctx, backupTo("velero-restart"))
		v := startFakeVelero(ctx, "velero-restart", "Available")
		v.endIn("") // the Backup runs until the spec lets it end
		s.installWithOperand(ctx)
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		Eventually(func(ctx context.Context) string {
			rec := &cleanupv1alpha1.CSVCleanup{}
			if err := k8s.Get(ctx, s.install.Key(), rec); err != nil || rec.Status.Backup == nil {
				return ""
			}
			return rec.Status.Backup.Phase
		}).WithContext(ctx).Should(Equal(plan.BackupPhaseInProgress))
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("Waiting for Velero's Backup velero-restart/" + name))

		By("creating an operand after the deletion began, while the Backup runs")
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool { return time.Now().Truncate(time.Second).After(csv.DeletionTimestamp.Time) }).Should(BeTrue())
		s.operand(ctx, 0, s.ns("a"), "late")

		By("restarting csv-cleaner while the Backup runs")
		stopManager()
		startManager()
		Consistently(func(ctx context.Context) []unstructured.Unstructured { return v.backups(ctx) }).WithContext(ctx).WithTimeout(2 * time.Second).Should(HaveLen(1))
		Expect(s.remaining(ctx)).To(ContainElements("Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))

		v.endIn(plan.BackupPhaseCompleted)
		s.csvGone(ctx)
		Expect(v.backups(ctx)).To(HaveLen(1))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "Widget " + s.ns("a") + "/late"}))
		Expect(kept(s.record(ctx), "Widget."+s.crd(0).Group)).To(Equal([]string{"CreatedAfterDeletion=1"}))
		Expect(s.eventCount(ctx, "BackupCreated")).To(Equal(1))
	})

	It("gates a ClusterExtension's uninstall alike, the CRD the garbage collector deletes (crds: Delete) in the Backup", func(ctx SpecContext) {
		s := newExtScenario("xbk")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.CRDs = cleanupv1alpha1.Delete
			backupTo("velero-ext")(p)
		})
		v := startFakeVelero(ctx, "velero-ext", "Available")
		s.create(ctx)
		s.resource(ctx, s.ns("a"), "one")
		s.resource(ctx, s.ns("b"), "two")
		s.afterResources()
		ext := s.ext.Name
		s.deleteAsOperatorController(ctx, nil)
		Eventually(s.phase).WithContext(ctx).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)))
		Expect(s.resources(ctx)).To(BeEmpty())
		rec := s.record(ctx)
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Planned", BeEquivalentTo(3)))))
		name := rec.Status.Backup.Name
		Expect(rec.Status.Message).To(ContainSubstring("velero restore create --from-backup " + name))
		list := v.list(name)
		Expect(list[s.ext.CRDs[0].Group+"/v1/Gadget"]).To(ConsistOf(s.ns("a")+"/one", s.ns("b")+"/two"))
		Expect(list["apiextensions.k8s.io/v1/CustomResourceDefinition"]).To(ContainElement(s.ext.CRDs[0].Name()))
		spec := v.backups(ctx)[0].Object["spec"].(map[string]any)
		Expect(spec["includedResources"]).To(ContainElement("customresourcedefinitions.apiextensions.k8s.io"))
		// made before the resources were listed: of every namespace, the extension's targets
		Expect(spec["includedNamespaces"]).To(ConsistOf(plan.EveryNamespace))
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ext}, &cleanupv1alpha1.ExtensionCleanup{})).To(Succeed())
	})

	It("needs no more than the shipped rights and manifests/velero's Role: without that Role it blocks Forbidden, deleting nothing", func(ctx SpecContext) {
		s := newScenario("bkrights")
		s.install.OLMAdminRoles = true
		startFakeVelero(ctx, "velero", "Available")
		runShipped(ctx)
		s.createPolicy(ctx, backupTo("velero"))
		s.installWithOperand(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, s.crd(0).Group, s.crd(0).Plural)).To(Succeed())
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedForbidden)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("velero.io"))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))

		By("applying manifests/velero, as docs/backup.md says")
		applyVeleroRole(ctx, "velero")
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.record(ctx).Status.Backup).To(HaveValue(HaveField("Verified", true)))
	})

	It("shows in `csv-cleaner plan` the Backup the run would make, and foresees what would block it, writing nothing", func(ctx SpecContext) {
		s := newScenario("bkplan")
		s.install.OLMAdminRoles = true
		v := startFakeVelero(ctx, "velero-plan", "Unavailable")
		runShipped(ctx) // the shipped ClusterRole and operand role, and no Role in Velero's namespace
		s.createPolicy(ctx, backupTo("velero-plan"))
		s.installWithOperand(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, s.crd(0).Group, s.crd(0).Plural)).To(Succeed())
		sa := &types.NamespacedName{Namespace: deployedSubject.Namespace, Name: deployedSubject.Name}
		planOf := func(ctx context.Context) *cleanup.DryRun {
			GinkgoHelper()
			s.afterOperands() // planned as if deleted now: an operand of this second would be of unknown age
			dry, err := csvctl.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(cleanup.Foresee(ctx, k8s, dry, sa)).To(Succeed())
			return dry
		}

		dry := planOf(ctx)
		Expect(dry.Verdict).To(Equal(cleanup.VerdictBlocked))
		Expect(dry.Message).To(And(ContainSubstring(`is "Unavailable", not Available`), ContainSubstring("apply manifests/velero/role.yaml")))
		Expect(dry.Refusals).To(ContainElement(And(HaveField("Kind", "Backup.velero.io"), HaveField("Reason", cleanupv1alpha1.BlockedForbidden))))
		Expect(dry.Backup).NotTo(BeNil())
		Expect(*dry.Backup).To(And(HaveField("Namespace", "velero-plan"), HaveField("Name", s.backupName(ctx)), HaveField("Planned", 3),
			HaveField("Namespaces", ConsistOf(s.ns("a"), s.ns("b"))), HaveField("Resources", ContainElement("widgets."+s.crd(0).Group))))

		By("making the storage location Available and giving csv-cleaner manifests/velero's Role")
		v.setLocation(ctx, "Available")
		applyVeleroRole(ctx, "velero-plan")
		dry = planOf(ctx)
		Expect(dry.Verdict).To(Equal(cleanup.VerdictUninstall), dry.Message)
		Expect(dry.Backup).To(HaveValue(And(HaveField("Reason", ""), HaveField("Message", ContainSubstring("a Velero Backup of the 3 objects")))))
		Expect(v.backups(ctx)).To(BeEmpty())
		Expect(s.remaining(ctx)).To(ContainElement("Widget " + s.ns("a") + "/w1"))
	})
})
