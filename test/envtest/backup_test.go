package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
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
	return decide.BackupName("ClusterServiceVersion", csv.Namespace, csv.Name, csv.UID, 1)
}

// applyVeleroRole applies manifests/velero/role.yaml in namespace (the
// file's is velero) and dependents.yaml, for the rest of the spec.
func applyVeleroRole(ctx context.Context, namespace string) {
	GinkgoHelper()
	// The dependents' roles first, in effect before the Role that lets a
	// waiting Undo go on.
	applyDependentsRoles(ctx)
	applyVeleroRoleOnly(ctx, namespace)
}

// applyVeleroRoleOnly is applyVeleroRole without the dependents' roles.
func applyVeleroRoleOnly(ctx context.Context, namespace string) {
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
	// In effect, as kubectl auth can-i says: the API server's authorizer
	// reads Roles from its cache, a moment after they are written.
	Eventually(func(ctx context.Context) bool {
		return allowed(ctx, "system:serviceaccount:"+deployedSubject.Namespace+":"+deployedSubject.Name,
			[]string{"system:serviceaccounts", "system:serviceaccounts:" + deployedSubject.Namespace},
			authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: namespace})
	}).WithContext(ctx).Should(BeTrue(), "csv-cleaner's ServiceAccount may create ConfigMaps in %s", namespace)
}

// applyDependentsRoles applies manifests/velero/dependents.yaml, and, as
// the admin its Forbidden block asks, a ClusterRole aggregated into it
// that may list the custom resources of every CRD there is now (the earlier
// specs' CRDs, which no role aggregated to view covers), for the rest of
// the spec.
func applyDependentsRoles(ctx context.Context) {
	GinkgoHelper()
	objs, err := fixtures.ShippedDependentsRoles()
	Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetKind() == "ClusterRole" {
			rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
			for _, r := range rules {
				rule := r.(map[string]any)
				Expect(rule["verbs"]).NotTo(ContainElement("*"))
				Expect(rule["resources"]).NotTo(ContainElement("*"))
			}
		}
	}
	createShipped(ctx, objs)
	others, err := fixtures.GrantListOnEveryCRD(ctx, k8s)
	Expect(err).NotTo(HaveOccurred())
	// In effect, as kubectl auth can-i says: dependents.yaml's lists, and the
	// aggregated role's last rule (kube-controller-manager aggregates it).
	last := others.Rules[len(others.Rules)-1]
	Eventually(func(ctx context.Context) bool {
		return access(ctx, "list", "", "configmaps", "") && access(ctx, "list", last.APIGroups[0], last.Resources[0], "")
	}).WithContext(ctx).Should(BeTrue(), "csv-cleaner's ServiceAccount may list what the dependents' roles grant")
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, others))).To(Succeed()) })
}

// backupPolicy is the resource policy of a Backup (its ConfigMap of the same name).
func (v *fakeVelero) backupPolicy(ctx context.Context, name string) veleroPolicy {
	GinkgoHelper()
	cm := &corev1.ConfigMap{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: name}, cm)).To(Succeed())
	var p veleroPolicy
	Expect(yaml.Unmarshal([]byte(cm.Data["policy"]), &p)).To(Succeed())
	return p
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
			HaveField("Phase", decide.BackupPhaseCompleted), HaveField("Verified", true),
			// the operand, the ClusterRole and its binding
			HaveField("Planned", BeEquivalentTo(3)), HaveField("Items", BeNumerically(">=", 3))))
		Expect(rec.Status.Message).To(ContainSubstring("undo-of CSV " + s.install.Namespace + "/" + s.install.CSVName))
		Expect(s.eventReasons(ctx)).To(ContainElements("BackupCreated", "BackupVerified", "CleanupCompleted"))

		By("the Backup holding what was deleted, and of the cluster's RBAC only the uninstall's, as its policy and resource list say")
		backups := v.backups(ctx)
		Expect(backups).To(HaveLen(1))
		spec := backups[0].Object["spec"].(map[string]any)
		// the CSV's target namespaces, made before the Widgets were listed (only a holds one)
		Expect(spec["includedNamespaces"]).To(ConsistOf(s.ns("a"), s.ns("b")))
		Expect(spec).NotTo(HaveKey("includedResources"))
		Expect(spec["resourcePolicy"]).To(Equal(map[string]any{"kind": "configmap", "name": name}))
		policy := v.backupPolicy(ctx, name)
		Expect(policy.IncludeExcludePolicy.IncludedClusterScopedResources).To(ConsistOf("clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io"))
		Expect(policy.ClusterScopedFilterPolicy.ResourceFilters).To(ConsistOf(
			veleroFilter{Kinds: []string{"clusterrolebindings.rbac.authorization.k8s.io"}, Names: []string{s.id + "-role"}},
			veleroFilter{Kinds: []string{"clusterroles.rbac.authorization.k8s.io"}, Names: []string{s.id + "-role"}}))
		list := v.list(name)
		Expect(list["rbac.authorization.k8s.io/v1/ClusterRole"]).To(ConsistOf(s.id + "-role"))
		destroyed := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "velero-first", Name: name + "-destroyed"}, destroyed)).To(Succeed())
		Expect(destroyed.OwnerReferences).To(ConsistOf(HaveField("Name", name)))
		Expect(list[s.crd(0).Group+"/v1/Widget"]).To(ConsistOf(s.ns("a") + "/w1"))
		Expect(list["rbac.authorization.k8s.io/v1/ClusterRole"]).To(ContainElement(s.id + "-role"))
		Expect(list["apiextensions.k8s.io/v1/CustomResourceDefinition"]).To(ContainElement(s.crd(0).Name()))
	})

	It("blocks on a Backup that fails, deleting nothing, and makes a new Backup by itself once the cause is gone, deleting none", func(ctx SpecContext) {
		s := newScenario("bkfail")
		s.createPolicy(ctx, backupTo("velero-fail"))
		v := startFakeVelero(ctx, "velero-fail", "Available")
		// Velero v1.18.3's item errors with 8 item-block workers at its default client QPS.
		rate := "name: /velero-data-7x4kq error: /failed to get volumesnapshot " + s.ns("a") + "/velero-data-7x4kq: client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"
		v.failBackups(rate, "name: /velero-logs-2b9sd error: /failed to get volumesnapshot", "third", "fourth")
		s.installWithOperand(ctx)
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupFailed)
		rec := s.record(ctx)
		Expect(rec.Status.Message).To(And(ContainSubstring("Velero's Backup "+name+" is PartiallyFailed"), ContainSubstring("csv-cleaner makes a new Backup, "+name+"-2, at ")))
		By("saying at once why it failed: the count, the first errors, what to change, in the record and an Event")
		why := And(ContainSubstring("Velero's Backup "+name+" is PartiallyFailed; 4 errors, the first 3: "+rate+" | name: /velero-logs-2b9sd"),
			ContainSubstring("| third;"), Not(ContainSubstring("fourth")), ContainSubstring("--client-qps"), ContainSubstring("--item-block-worker-count"))
		Expect(rec.Status.Message).To(why)
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Phase", decide.BackupPhasePartiallyFailed), HaveField("Verified", false), HaveField("RetryTime", Not(BeNil())),
			HaveField("LastFailure", why))))
		Expect(s.eventNotes(ctx, "BackupFailed")).To(ConsistOf(why))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))

		By("while the next attempt runs, the record still says why the one before failed")
		v.endIn("")
		Eventually(func(ctx context.Context) string { return s.record(ctx).Status.Message }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(And(
			ContainSubstring("Waiting for Velero's Backup velero-fail/"+name+"-2 (InProgress)"), ContainSubstring("attempt 2, after: Velero's Backup "+name+" is PartiallyFailed; 4 errors")))

		By("fixing the cause, and nothing else: the next Backup completes")
		v.endIn(decide.BackupPhaseCompleted)
		retry := rec.Status.Backup.RetryTime.Time
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		backups := v.backups(ctx)
		Expect(backups).To(HaveLen(2)) // the failed one stays: csv-cleaner deletes no Backup
		for _, b := range backups {
			if b.GetName() == name+"-2" {
				Expect(b.GetCreationTimestamp().Time).To(BeTemporally(">=", retry.Truncate(time.Second)))
			}
		}
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Name", name+"-2"), HaveField("Attempt", BeEquivalentTo(2)))))
	})

	It("blocks on a completed Backup whose resource list lacks an object the uninstall would delete, then makes a new one by itself", func(ctx SpecContext) {
		s := newScenario("bkmiss")
		s.createPolicy(ctx, backupTo("velero-miss"))
		v := startFakeVelero(ctx, "velero-miss", "Available")
		s.installWithOperand(ctx)
		s.operand(ctx, 0, s.ns("b"), "w2")
		v.leave(s.ns("b") + "/w2")
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupIncomplete)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("Widget "+s.ns("b")+"/w2"), ContainSubstring(name+"-2")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "Widget "+s.ns("b")+"/w2", "ClusterRole "+s.id+"-role"))

		By("Velero learning what it missed (as its discovery does every 5 minutes), and nobody deleting anything")
		v.leave("")
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(v.backups(ctx)).To(HaveLen(2))
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

		available := time.Now().Truncate(time.Second)
		v.setLocation(ctx, "Available")
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		By("the one Backup made by itself once the location was Available: the first attempt, verified")
		backups := v.backups(ctx)
		Expect(backups).To(HaveLen(1))
		Expect(backups[0].GetCreationTimestamp().Time).NotTo(BeTemporally("<", available))
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Attempt", BeEquivalentTo(1)), HaveField("Name", backups[0].GetName()))))
	})

	It("blocks on a Backup Velero refused as its storage went down, and makes the next attempt by itself once Velero reports the location Available", func(ctx SpecContext) {
		s := newScenario("bkdown")
		s.createPolicy(ctx, backupTo("velero-bkdown"))
		v := startFakeVelero(ctx, "velero-bkdown", "Available")
		v.locationDownOnBackup()
		s.installWithOperand(ctx)
		name := s.backupName(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupFailed)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("Velero's Backup "+name+" is FailedValidation"), ContainSubstring(name+"-2")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))

		By("Velero reporting the location Available again, and nobody deleting or making anything")
		v.setLocation(ctx, "Available")
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Attempt", BeEquivalentTo(2)), HaveField("Name", name+"-2"))))
		phases := map[string]string{}
		for _, b := range v.backups(ctx) {
			phases[b.GetName()], _, _ = unstructured.NestedString(b.Object, "status", "phase")
		}
		Expect(phases).To(Equal(map[string]string{name: decide.BackupPhaseFailedValidation, name + "-2": decide.BackupPhaseCompleted}),
			"the refused attempt stays as Velero left it, and the second was made by csv-cleaner itself")
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
		Expect(rec.Status.Message).NotTo(Or(ContainSubstring("undo-of"), ContainSubstring("holds everything it destroyed")), "nothing was destroyed: there is nothing to undo")
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
		Expect(rec.Status.Message).NotTo(Or(ContainSubstring("undo-of"), ContainSubstring("holds everything it destroyed")), "nothing was destroyed: there is nothing to undo")
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
		}).WithContext(ctx).Should(Equal(decide.BackupPhaseInProgress))
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

		v.endIn(decide.BackupPhaseCompleted)
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
		Expect(rec.Status.Message).To(ContainSubstring("undo-of ClusterExtension " + ext))
		list := v.list(name)
		Expect(list[s.ext.CRDs[0].Group+"/v1/Gadget"]).To(ConsistOf(s.ns("a")+"/one", s.ns("b")+"/two"))
		// the extension's CRD, and no other
		Expect(list["apiextensions.k8s.io/v1/CustomResourceDefinition"]).To(ConsistOf(s.ext.CRDs[0].Name()))
		spec := v.backups(ctx)[0].Object["spec"].(map[string]any)
		Expect(v.backupPolicy(ctx, name).ClusterScopedFilterPolicy.ResourceFilters).To(ContainElement(
			veleroFilter{Kinds: []string{"customresourcedefinitions.apiextensions.k8s.io"}, Names: []string{s.ext.CRDs[0].Name()}}))
		// made before the resources were listed: of every namespace, the extension's targets
		Expect(spec["includedNamespaces"]).To(ConsistOf(decide.EveryNamespace))
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ext}, &cleanupv1alpha1.ExtensionCleanup{})).To(Succeed())
	})

	It("needs no more than the shipped rights and manifests/velero: without it it blocks Forbidden, deleting nothing", func(ctx SpecContext) {
		s := newScenario("bkrights")
		s.install.OLMAdminRoles = true
		startFakeVelero(ctx, "velero", "Available")
		runShipped(ctx)
		s.createPolicy(ctx, backupTo("velero"))
		s.installWithOperand(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, s.crd(0).Group, s.crd(0).Plural)).To(Succeed())
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedForbidden)
		Expect(s.record(ctx).Status.Message).To(Or(ContainSubstring("velero.io"), ContainSubstring("manifests/velero/dependents.yaml")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements(
			"CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole "+s.id+"-role"))

		By("applying manifests/velero, as docs/backup.md says (kubectl apply -k: role.yaml, dependents.yaml, and undo.yaml with its fence, in effect before the Role)")
		applyUndoRights(ctx)
		applyVeleroRole(ctx, "velero")
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		backup := s.record(ctx).Status.Backup
		Expect(backup).To(HaveValue(HaveField("Verified", true)))
		policy := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "velero", Name: backup.Name}, policy)).To(Succeed())
		Expect(policy.OwnerReferences).To(ConsistOf(HaveField("Name", backup.Name)), "the Backup's resource policy is owned by it")
		kept, err := velero.Client{Live: k8s, Namespace: "velero"}.ReadDestroyed(ctx, backup.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(kept).NotTo(BeNil(), "what the uninstall destroyed is kept beside its Backup")
	})

	It("makes the Backup's resource policy owned by it before it deletes, when the write was refused after the Backup was made: blocked meanwhile, deleting nothing", func(ctx SpecContext) {
		s := newScenario("bkownpolicy")
		v := startFakeVelero(ctx, "velero-bkownpolicy", "Available")
		s.createPolicy(ctx, backupTo("velero-bkownpolicy"))
		s.installWithOperand(ctx)

		By("an admission policy that refuses every change of a ConfigMap in Velero's namespace, in effect")
		refuse := refuseConfigMaps(ctx, "velero-bkownpolicy", "", admissionregistrationv1.Update)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedAdmissionRefused)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("owned by its Backup"))

		By("Velero's Backup complete: the passes that would verify it are blocked the same way, deleting nothing")
		Eventually(func(ctx context.Context) []string {
			var phases []string
			for _, b := range v.backups(ctx) {
				phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
				phases = append(phases, phase)
			}
			return phases
		}).WithContext(ctx).Should(ConsistOf(decide.BackupPhaseCompleted))
		Consistently(func(ctx context.Context) []string { return append(s.remaining(ctx), s.phase(ctx)) }).WithContext(ctx).WithTimeout(3 * time.Second).
			Should(ContainElements("Widget "+s.ns("a")+"/w1", "Blocked/"+cleanupv1alpha1.BlockedAdmissionRefused))

		By("the admission policy gone: the uninstall completes, and the resource policy goes with its Backup")
		refuse()
		s.csvGone(ctx)
		name := s.record(ctx).Status.Backup.Name
		policy := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "velero-bkownpolicy", Name: name}, policy)).To(Succeed())
		Expect(policy.OwnerReferences).To(ConsistOf(HaveField("Name", name)))
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
		planOf := func(ctx context.Context) *dryrun.DryRun {
			GinkgoHelper()
			s.afterOperands() // planned as if deleted now: an operand of this second would be of unknown age
			dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(dryrun.Foresee(ctx, k8s, disc, dry, sa)).To(Succeed())
			return dry
		}

		dry := planOf(ctx)
		Expect(dry.Verdict).To(Equal(decide.VerdictBlocked))
		Expect(dry.Message).To(And(ContainSubstring(`is "Unavailable", not Available`), ContainSubstring("apply manifests/velero/role.yaml")))
		Expect(dry.Refusals).To(ContainElement(And(HaveField("Kind", "Backup.velero.io"), HaveField("Reason", cleanupv1alpha1.BlockedForbidden))))
		Expect(dry.Backup).NotTo(BeNil())
		Expect(*dry.Backup).To(And(HaveField("Namespace", "velero-plan"), HaveField("Name", s.backupName(ctx)), HaveField("Planned", 3), HaveField("Dependents", 0),
			HaveField("Namespaces", ConsistOf(s.ns("a"), s.ns("b"))), HaveField("Resources", ContainElement("widgets."+s.crd(0).Group))))

		By("making the storage location Available and giving csv-cleaner manifests/velero's Role")
		v.setLocation(ctx, "Available")
		applyVeleroRole(ctx, "velero-plan")
		dry = planOf(ctx)
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Backup).To(HaveValue(And(HaveField("Reason", ""), HaveField("Message", ContainSubstring("a Velero Backup of the 3 objects to delete, the 0 the garbage collector deletes with them")))))
		Expect(v.backups(ctx)).To(BeEmpty())
		Expect(s.remaining(ctx)).To(ContainElement("Widget " + s.ns("a") + "/w1"))
	})

	Describe("What an uninstall destroys with its operands (the ownerReference closure), backed up first", closureSpecs)
	Describe("The undo links owners again", relinkSpecs)
	Describe("The undo as an API: Undo objects", undoObjectSpecs)
	Describe("The gate's order, from csv-cleaner's own requests", orderSpecs)
	Describe("The undo on a bad day: a failed Restore, Velero's storage down, runs again", undoFaultSpecs)
	Describe("A kind nobody can read elsewhere in the cluster (opentelemetry-operator's collectors behind a dead conversion webhook)", unreadSpecs)
})
