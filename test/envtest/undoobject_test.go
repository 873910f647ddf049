package envtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// reinstallRunning installs the scenario's operator again, as OLM does:
// its CRDs (kept, or made again) and a Succeeded CSV of the same name
// whose install strategy names a Deployment, and that
// Deployment with replicas, as OLM makes it (the suite runs no pods: a
// replica is a running operator as far as the undo can tell).
func (s *scenario) reinstallRunning(ctx context.Context, replicas int32) *appsv1.Deployment {
	GinkgoHelper()
	for _, crd := range s.install.CRDs {
		Expect(fixtures.CreateCRD(ctx, k8s, s.install.CRDObject(crd))).To(Succeed())
	}
	labels := map[string]string{"app": s.id + "-operator"}
	spec := appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "operator"}}}}}
	csv := s.install.CSV()
	csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs = []operatorsv1alpha1.StrategyDeploymentSpec{{Name: s.id + "-operator", Spec: spec}}
	Expect(k8s.Create(ctx, csv)).To(Succeed())
	base := csv.DeepCopy()
	csv.Status.Phase, csv.Status.Reason = "Succeeded", "InstallSucceeded"
	Expect(k8s.Status().Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.install.Namespace, Name: s.id + "-operator"}, Spec: spec}
	Expect(k8s.Create(ctx, d)).To(Succeed())
	return d
}

// scale sets a Deployment's replicas, as kubectl scale does.
func scale(ctx context.Context, d *appsv1.Deployment, replicas int32) {
	GinkgoHelper()
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	base := d.DeepCopy()
	d.Spec.Replicas = &replicas
	Expect(k8s.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
}

// undoOf is an Undo of the scenario's uninstall, its Backups looked for in
// veleroNamespace.
func (s *scenario) undoOf(name, veleroNamespace string, mutate ...func(*cleanupv1alpha1.UndoSpec)) *cleanupv1alpha1.Undo {
	u := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cleanupv1alpha1.UndoSpec{
		Uninstall:       cleanupv1alpha1.UndoTarget{Kind: "ClusterServiceVersion", Namespace: s.install.Namespace, Name: s.install.CSVName},
		VeleroNamespace: veleroNamespace,
	}}
	for _, m := range mutate {
		m(&u.Spec)
	}
	return u
}

// createUndo creates u, deleted after the spec.
func createUndo(ctx context.Context, u *cleanupv1alpha1.Undo) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, u)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, u))).To(Succeed()) })
}

// undoStatus reads an Undo's status as it is now.
func undoStatus(ctx context.Context, name string) cleanupv1alpha1.UndoStatus {
	GinkgoHelper()
	u := &cleanupv1alpha1.Undo{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, u)).To(Succeed())
	return u.Status
}

// undoPhase is an Undo's phase and the reason of its Complete condition.
func undoPhase(ctx context.Context, name string) string {
	st := undoStatus(ctx, name)
	c := meta.FindStatusCondition(st.Conditions, cleanupv1alpha1.UndoConditionComplete)
	if c == nil {
		return string(st.Phase)
	}
	return string(st.Phase) + "/" + c.Reason
}

// undoObjectSpecs are the specs of the undo as an API (docs/backup.md,
// "The Undo object"): they run in the backup gate's ordered container.
func undoObjectSpecs() {
	It("runs an Undo: blocks while the operator runs, saying how to stop it, goes on by itself once it is stopped, follows the same Restore after csv-cleaner stopped in the middle, links the owners; a second Undo makes no Restore, and deleting one undoes nothing", func(ctx SpecContext) {
		s := newScenario("undoobj")
		s.createPolicy(ctx, backupTo("velero-undoobj"))
		v := startFakeVelero(ctx, "velero-undoobj", "Available")
		s.installWithOperand(ctx)
		a := s.ns("a")
		w1 := fixtures.Operand(s.crd(0), a, "w1")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w1), w1)).To(Succeed())
		cm := configMap(ctx, a, "w1-config", w1)
		s.uninstall(ctx)
		Eventually(func(ctx context.Context) bool { return present(ctx, cm) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(BeFalse())

		By("a selection that names nothing the uninstall destroyed: Failed, nothing restored")
		bad := s.undoOf("undoobj-typo", "velero-undoobj", func(u *cleanupv1alpha1.UndoSpec) {
			u.Only = []string{"Widget/" + a + "/w9"}
		})
		createUndo(ctx, bad)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, bad.Name) }).WithContext(ctx).Should(Equal("Failed/" + cleanupv1alpha1.UndoReasonInvalidSelection))
		Expect(meta.FindStatusCondition(undoStatus(ctx, bad.Name).Conditions, cleanupv1alpha1.UndoConditionComplete).Message).To(ContainSubstring("the uninstall deleted no custom resource Widget/" + a + "/w9"))
		Expect(restoresIn(ctx, "velero-undoobj")).To(BeZero())

		By("the operator installed again first, and running: the Undo blocks, says how to stop it, and restores nothing")
		operator := s.reinstallRunning(ctx, 1)
		u := s.undoOf("undoobj", "velero-undoobj")
		createUndo(ctx, u)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).Should(Equal("Blocked/" + cleanupv1alpha1.UndoReasonOperatorRunning))
		Expect(meta.FindStatusCondition(undoStatus(ctx, u.Name).Conditions, cleanupv1alpha1.UndoConditionComplete).Message).To(And(
			ContainSubstring("Deployment "+s.install.Namespace+"/"+operator.Name+" of CSV "+s.install.Namespace+"/"+s.install.CSVName+" has 1 replica"),
			ContainSubstring("kubectl scale deployment -n "+s.install.Namespace+" "+operator.Name+" --replicas=0"), ContainSubstring("nothing was restored")))
		Consistently(func(ctx context.Context) int { return restoresIn(ctx, "velero-undoobj") }).WithContext(ctx).WithTimeout(2 * time.Second).Should(BeZero())

		By("the operator scaled to zero, Velero holding the Restore in progress: the Undo goes on by itself and says InProgress")
		v.endRestoresIn("")
		scale(ctx, operator, 0)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("InProgress/" + cleanupv1alpha1.UndoReasonRestoring))
		restore := undoStatus(ctx, u.Name).Restore
		Expect(restore).NotTo(BeEmpty())

		By("csv-cleaner stopped in the middle; Velero restores without the ownerReferences")
		scaleToZero()
		v.endRestoresIn("Completed")
		Eventually(func(ctx context.Context) bool { return present(ctx, cm) }).WithContext(ctx).Should(BeTrue())
		Expect(ownersOf(ctx, cm)).To(BeEmpty(), "Velero strips them")

		By("csv-cleaner back: it follows the same Restore, links the owners and completes")
		startManager()
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		st := undoStatus(ctx, u.Name)
		Expect(st.Restore).To(Equal(restore))
		Expect(restoresIn(ctx, "velero-undoobj")).To(Equal(1))
		Expect(st).To(And(HaveField("Objects", BeEquivalentTo(2)), HaveField("Restored", BeEquivalentTo(2)), HaveField("Missing", BeZero()),
			HaveField("OwnersLinked", BeEquivalentTo(1)), HaveField("NotBack", BeEmpty()), HaveField("CompletionTime", Not(BeNil()))))
		Expect(st.Backup).To(HavePrefix("velero-undoobj/"))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
		everyOwnerThere(ctx, cm)
		undoEvents(ctx, u.Name, "UndoBlocked", "UndoInProgress", "UndoCompleted")

		By("a second Undo of the same uninstall: nothing missing, no Restore; `csv-cleaner undo` through an Undo object says the same")
		again := s.undoOf("undoobj-again", "velero-undoobj")
		createUndo(ctx, again)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, again.Name) }).WithContext(ctx).Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		Expect(undoStatus(ctx, again.Name)).To(And(HaveField("Present", BeEquivalentTo(2)), HaveField("Restored", BeZero()), HaveField("Restore", "")))
		out, code := runCLI(ctx, "undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undoobj")
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(ContainSubstring("0 restored, 2 present already, 0 missing"), MatchRegexp(`ConfigMap\s+`+a+`\s+w1-config\s+present\s+-\s+linked to Widget.`+s.crd(0).Group+` `+a+`/w1`)))
		Expect(restoresIn(ctx, "velero-undoobj")).To(Equal(1))
		undos := &cleanupv1alpha1.UndoList{}
		Expect(k8s.List(ctx, undos)).To(Succeed())
		Expect(undos.Items).To(HaveLen(4), "the CLI's Undo stays, as history")

		By("deleting the Undo: what it restored stays")
		Expect(k8s.Delete(ctx, u)).To(Succeed())
		Consistently(func(ctx context.Context) bool { return present(ctx, w1) && present(ctx, cm) }).WithContext(ctx).WithTimeout(2 * time.Second).Should(BeTrue())
	})

	It("keeps every object's row beside its Backup, owned by the Undo; `csv-cleaner undo` prints them for a person who may make and read Undos and read that ConfigMap, and may read nothing the undo restores", func(ctx SpecContext) {
		s := newScenario("undorows")
		s.createPolicy(ctx, backupTo("velero-undorows"))
		startFakeVelero(ctx, "velero-undorows", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undorows", nil)
		a := s.ns("a")
		kubeconfig := undoPerson(ctx, "undorows-person", "velero-undorows")
		args := []string{"undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undorows"}

		By("the undo run by that person, through an Undo: every row, as the Undo came to it")
		out, errOut, code := runCLIWith(ctx, kubeconfig, args...)
		Expect(code).To(BeZero(), errOut)
		Expect(errOut).NotTo(ContainSubstring("Undoing from here"))
		Expect(out).To(And(MatchRegexp(`Restore:\s+\S+-undo-[0-9a-f]{8} \(Completed\)`), ContainSubstring("2 restored, 0 present already, 0 missing"),
			MatchRegexp(`Widget.`+s.crd(0).Group+`\s+`+a+`\s+w1\s+restored`),
			MatchRegexp(`ConfigMap\s+`+a+`\s+w1-config\s+restored\s+-\s+linked to Widget.`+s.crd(0).Group+` `+a+`/w1`)))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))

		By("the rows' ConfigMap: named by the Undo's status, in Velero's namespace, owned by the Undo")
		undos := undosOf(ctx, s)
		Expect(undos).To(HaveLen(1))
		u := undos[0]
		Expect(u.Status.Rows).To(Equal("velero-undorows/" + u.Name + "-rows"))
		rows := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "velero-undorows", Name: u.Name + "-rows"}, rows)).To(Succeed())
		Expect(rows.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "Undo"), HaveField("UID", u.UID))))

		By("run again with -o json by the same person: a second Undo finds everything present, and the rows it kept say so")
		out, errOut, code = runCLIWith(ctx, kubeconfig, append(args, "-o", "json")...)
		Expect(code).To(BeZero(), errOut)
		Expect(out).To(And(ContainSubstring(`"name": "w1-config"`), ContainSubstring(`"state": "present"`), ContainSubstring(`"Widget.`+s.crd(0).Group+` `+a+`/w1"`)))
		Expect(out).NotTo(Or(ContainSubstring(`"restore"`), ContainSubstring(`"state": "restored"`)))
		Expect(undosOf(ctx, s)).To(HaveEach(HaveField("Status.Rows", HavePrefix("velero-undorows/"))))
	})

	It("ends an Undo whose rows it is refused to keep, as it ends any other: RowsNotKept, no status.rows, and `csv-cleaner undo` reads each object's row itself", func(ctx SpecContext) {
		s := newScenario("undonorows")
		s.createPolicy(ctx, backupTo("velero-undonorows"))
		startFakeVelero(ctx, "velero-undonorows", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undonorows", nil)
		a := s.ns("a")

		By("an admission policy that refuses the rows' ConfigMap in Velero's namespace, in effect; the undo through an Undo")
		refuseConfigMaps(ctx, "velero-undonorows", "-rows", admissionregistrationv1.Create, admissionregistrationv1.Update)
		out, errOut, code := runCLIAll(ctx, "undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undonorows")
		Expect(code).To(BeZero(), errOut)
		Expect(errOut).NotTo(ContainSubstring("Undoing from here"))
		Expect(out).To(And(ContainSubstring("2 restored, 0 present already, 0 missing"),
			MatchRegexp(`ConfigMap\s+`+a+`\s+w1-config\s+restored\s+-\s+linked to Widget.`+s.crd(0).Group+` `+a+`/w1`)))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))

		By("the Undo: Completed, no rows named, and a Warning that says why")
		undos := undosOf(ctx, s)
		Expect(undos).To(ConsistOf(And(HaveField("Status.Phase", cleanupv1alpha1.UndoCompleted), HaveField("Status.Rows", BeEmpty()))))
		undoEvents(ctx, undos[0].Name, "UndoCompleted", "RowsNotKept")
	})

	It("says in an Undo's status that the uninstall it names had no backup, or does not exist; the API refuses a malformed Undo and a change of its spec", func(ctx SpecContext) {
		startFakeVelero(ctx, "velero-undobad", "Available")
		typo := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "undobad-typo"}, Spec: cleanupv1alpha1.UndoSpec{
			Uninstall: cleanupv1alpha1.UndoTarget{Kind: "ClusterServiceVersion", Namespace: "operators", Name: "no-such-operator.v1.0.0"}, VeleroNamespace: "velero-undobad"}}
		createUndo(ctx, typo)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, typo.Name) }).WithContext(ctx).Should(Equal("Failed/" + cleanupv1alpha1.UndoReasonNoBackup))
		Expect(meta.FindStatusCondition(undoStatus(ctx, typo.Name).Conditions, cleanupv1alpha1.UndoConditionComplete).Message).To(
			And(ContainSubstring("no verified backup of the uninstall of CSV operators/no-such-operator.v1.0.0"), ContainSubstring("nothing was restored")))
		Expect(restoresIn(ctx, "velero-undobad")).To(BeZero())
		undoEvents(ctx, typo.Name, "UndoFailed")

		By("the CLI through an Undo object: exit 1, the same message")
		_, code := runCLI(ctx, "undo", "clusterextension", "never-installed", "--velero-namespace", "velero-undobad")
		Expect(code).To(Equal(1))

		By("malformed: refused by the API server, with what is wrong")
		extWithNamespace := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "undobad-ext"}, Spec: cleanupv1alpha1.UndoSpec{
			Uninstall: cleanupv1alpha1.UndoTarget{Kind: "ClusterExtension", Namespace: "operators", Name: "x"}}}
		Expect(k8s.Create(ctx, extWithNamespace)).To(MatchError(ContainSubstring("a ClusterExtension by its name alone")))
		csvWithout := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "undobad-csv"}, Spec: cleanupv1alpha1.UndoSpec{
			Uninstall: cleanupv1alpha1.UndoTarget{Kind: "ClusterServiceVersion", Name: "x"}}}
		Expect(k8s.Create(ctx, csvWithout)).To(MatchError(ContainSubstring("a ClusterServiceVersion is named by namespace and name")))
		other := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "undobad-kind"}, Spec: cleanupv1alpha1.UndoSpec{
			Uninstall: cleanupv1alpha1.UndoTarget{Kind: "Subscription", Namespace: "operators", Name: "x"}}}
		Expect(k8s.Create(ctx, other)).To(MatchError(ContainSubstring("Unsupported value")))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(typo), typo)).To(Succeed())
		typo.Spec.Uninstall.Name = "another.v1.0.0"
		Expect(k8s.Update(ctx, typo)).To(MatchError(ContainSubstring("an Undo's spec cannot change")))
	})
}

// undoEvents waits until the Events about the Undo called name have each
// of reasons.
func undoEvents(ctx context.Context, name string, reasons ...string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) []string {
		list := &eventsv1.EventList{}
		Expect(k8s.List(ctx, list)).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Undo" && e.Regarding.Name == name {
				out = append(out, e.Reason)
			}
		}
		return out
	}).WithContext(ctx).Should(ContainElements(reasons))
}

// undoPerson is the kubeconfig of a new user, name, who may make, follow
// and delete Undos and read ConfigMaps in veleroNamespace (an Undo's rows),
// and nothing else: not the uninstall's record, not Velero's objects, not
// what the undo restores.
func undoPerson(ctx context.Context, name, veleroNamespace string) string {
	GinkgoHelper()
	authn, err := cp.Env.AddUser(envtest.User{Name: name}, nil)
	Expect(err).NotTo(HaveOccurred())
	user := rbacv1.Subject{Kind: rbacv1.UserKind, Name: name}
	bindRole(ctx, name, &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{APIGroups: []string{cleanupv1alpha1.GroupVersion.Group}, Resources: []string{"undos"},
		Verbs: []string{"create", "get", "list", "watch", "delete"}}}}, user)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: veleroNamespace, Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: role.ObjectMeta, Subjects: []rbacv1.Subject{user},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	Eventually(func(ctx context.Context) bool {
		return allowed(ctx, name, nil, authorizationv1.ResourceAttributes{Verb: "create", Group: cleanupv1alpha1.GroupVersion.Group, Resource: "undos"}) &&
			allowed(ctx, name, nil, authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Namespace: veleroNamespace})
	}).WithContext(ctx).Should(BeTrue(), "the rights are in effect, as kubectl auth can-i says")
	raw, err := authn.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(path, raw, 0o600)).To(Succeed())
	return path
}

// applyUndoRights applies manifests/velero/undo.yaml, as an admin does for
// Undos, removed after the spec (createShipped). It returns once the rights
// are in effect, as an admin checks with kubectl auth can-i: csv-cleaner-undo
// gets its rules from kube-controller-manager's aggregation, a moment after
// it is created (under load, after an Undo made at once would have run).
func applyUndoRights(ctx context.Context) {
	GinkgoHelper()
	objs, err := fixtures.ShippedUndoObjects()
	Expect(err).NotTo(HaveOccurred())
	createShipped(ctx, objs)
	Eventually(func(ctx context.Context) bool { return access(ctx, "patch", "", "configmaps", "") }).WithContext(ctx).
		Should(BeTrue(), "csv-cleaner's ServiceAccount may patch ConfigMaps once csv-cleaner-undo has aggregated csv-cleaner-undo-base")
	waitFenced(ctx)
}

// undoFenced is what csv-cleaner-undo-fence says when it refuses a request.
const undoFenced = "csv-cleaner may change only the ownerReferences of an object Velero restored"

// waitFenced returns once csv-cleaner-undo-fence refuses csv-cleaner's
// ServiceAccount a change of a ConfigMap Velero did not restore (a dry
// run, impersonating it): the API server loads an admission policy a moment
// after it is made.
func waitFenced(ctx context.Context) {
	GinkgoHelper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + deployedSubject.Namespace + ":" + deployedSubject.Name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + deployedSubject.Namespace, "system:authenticated"}}
	as, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace("undofence-probe")))).To(Succeed())
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "undofence-probe", Name: "probe"}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, probe))).To(Succeed())
	Eventually(func(ctx context.Context) error {
		fresh := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(probe), fresh)).To(Succeed())
		changed := fresh.DeepCopy()
		changed.Data = map[string]string{"k": "v"}
		return as.Patch(ctx, changed, client.MergeFrom(fresh), client.DryRunAll)
	}).WithContext(ctx).Should(MatchError(ContainSubstring(undoFenced)), "csv-cleaner-undo-fence in effect")
}

var _ = Describe("The rights and the fence of manifests/velero/undo.yaml", func() {
	It("let csv-cleaner's ServiceAccount write the ownerReferences of what Velero restored, and nothing else", func(ctx SpecContext) {
		as, err := client.New(deployedServiceAccount(ctx), client.Options{Scheme: k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		applyUndoRights(ctx)
		ns := "undofence"
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(ns)))).To(Succeed())
		owner := configMap(ctx, ns, "owner")
		restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored", Labels: map[string]string{"velero.io/backup-name": "b1"}},
			Data: map[string][]byte{"password": []byte("s3cret")}}
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-restored"}, Data: map[string][]byte{"password": []byte("s3cret")}}
		Expect(k8s.Create(ctx, restored)).To(Succeed())
		Expect(k8s.Create(ctx, mine)).To(Succeed())
		restored.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		mine.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		patch := func(s *corev1.Secret, change func(*corev1.Secret), opts ...client.PatchOption) error {
			fresh := &corev1.Secret{}
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), fresh)).To(Succeed())
			changed := fresh.DeepCopy()
			change(changed)
			return as.Patch(ctx, changed, client.MergeFrom(fresh), opts...)
		}
		link := func(s *corev1.Secret) { s.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)} }

		By("its data, its labels, or a Secret Velero did not restore: refused by the fence (dry runs, so that nothing changes while the policy loads)")
		for what, change := range map[string]func(*corev1.Secret){
			"data":  func(s *corev1.Secret) { s.Data["password"] = []byte("stolen") },
			"label": func(s *corev1.Secret) { delete(s.Labels, "velero.io/backup-name"); link(s) },
		} {
			Eventually(func(ctx context.Context) error { return patch(restored, change, client.DryRunAll) }).WithContext(ctx).
				Should(And(Satisfy(apierrors.IsForbidden), MatchError(ContainSubstring(undoFenced))), what)
		}
		Eventually(func(ctx context.Context) error { return patch(mine, link, client.DryRunAll) }).WithContext(ctx).Should(MatchError(ContainSubstring(undoFenced)))

		By("the ownerReferences of a restored Secret: allowed")
		Expect(patch(restored, link)).To(Succeed())
		Expect(ownersOf(ctx, restored)).To(ConsistOf(HaveField("UID", owner.UID)))
		Expect(ownersOf(ctx, mine)).To(BeEmpty())
		s := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(restored), s)).To(Succeed())
		Expect(s.Data).To(HaveKeyWithValue("password", []byte("s3cret")))

		By("of a restored claim, the annotation Velero's Restore left on it, and that alone: allowed; of a Secret: refused")
		marks := map[string]string{decide.VeleroMustIncludeAnnotation: "true", "example.com/note": "kept"}
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored-claim", Labels: map[string]string{"velero.io/backup-name": "b1"}, Annotations: marks},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		unannotate := func(key string) client.Patch {
			return client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+key+`":null}}}`))
		}
		Expect(as.Patch(ctx, claim.DeepCopy(), unannotate("example.com/note"), client.DryRunAll)).To(And(Satisfy(apierrors.IsForbidden), MatchError(ContainSubstring(undoFenced))))
		Expect(k8s.Patch(ctx, restored.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+decide.VeleroMustIncludeAnnotation+`":"true"}}}`)))).To(Succeed())
		Expect(as.Patch(ctx, restored.DeepCopy(), unannotate(decide.VeleroMustIncludeAnnotation), client.DryRunAll)).To(And(Satisfy(apierrors.IsForbidden), MatchError(ContainSubstring(undoFenced))))
		Expect(as.Patch(ctx, claim.DeepCopy(), unannotate(decide.VeleroMustIncludeAnnotation))).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		Expect(claim.Annotations).To(Equal(map[string]string{"example.com/note": "kept"}))

		By("a kind the role does not name: refused by RBAC")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", Labels: map[string]string{"velero.io/backup-name": "b1"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c"}}}}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		base := pod.DeepCopy()
		pod.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
		Expect(apierrors.IsForbidden(as.Patch(ctx, pod, client.MergeFrom(base)))).To(BeTrue())

		By("with manifests/velero's Role as well: csv-cleaner replaces its own ConfigMaps in Velero's namespace (what an uninstall destroyed, an Undo's rows), as a pass run again does")
		role, _, err := fixtures.ShippedVeleroRole()
		Expect(err).NotTo(HaveOccurred())
		objs, err := fixtures.ShippedUndoObjects()
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).To(ContainElement(WithTransform(func(o client.Object) string { return fmt.Sprint(o.(*unstructured.Unstructured).Object["spec"]) },
			ContainSubstring("request.namespace == '"+role.Namespace+"'"))), "the fence names role.yaml's namespace")
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(role.Namespace)))).To(Succeed())
		applyVeleroRole(ctx, role.Namespace)
		own := func(ns, name string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{velero.ManagedByLabel: velero.ManagedBy}},
				Data: map[string]string{"k": name}}
		}
		v := velero.Client{Live: k8s, Writer: as, Namespace: "velero"}
		Expect(v.Put(ctx, own("velero", "undofence-own"))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, own("velero", "undofence-own"))).To(Succeed()) })
		again := own("velero", "undofence-own")
		again.Data["k"] = "written again"
		Expect(v.Put(ctx, again)).To(Succeed(), "replacing it is an UPDATE the fence lets through")
		read := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(again), read)).To(Succeed())
		Expect(read.Data).To(HaveKeyWithValue("k", "written again"))

		By("Velero's own ConfigMap in its namespace, or one labeled as csv-cleaner's elsewhere: refused by the fence")
		velerosOwn := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "velero", Name: "undofence-velero"}, Data: map[string]string{"k": "v"}}
		Expect(k8s.Create(ctx, velerosOwn)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, velerosOwn)).To(Succeed()) })
		elsewhere := own(ns, "undofence-elsewhere")
		Expect(k8s.Create(ctx, elsewhere)).To(Succeed())
		for _, cm := range []*corev1.ConfigMap{velerosOwn, elsewhere} {
			changed := cm.DeepCopy()
			changed.Data["k"] = "changed"
			Expect(as.Patch(ctx, changed, client.MergeFrom(cm))).To(And(Satisfy(apierrors.IsForbidden), MatchError(ContainSubstring(undoFenced))), cm.Namespace+"/"+cm.Name)
		}
	})
})

// createShipped creates the objects of a manifest, as kubectl apply does,
// and deletes them after the spec. kube-controller-manager's
// clusterrole-aggregation controller writes an aggregating ClusterRole with
// a forced server-side apply, which makes it again, without its
// aggregationRule, when it had the role queued as an earlier spec deleted
// it: such a leftover aggregates nothing, and is deleted first.
func createShipped(ctx context.Context, objs []client.Object) {
	GinkgoHelper()
	for _, o := range objs {
		shipped := o.DeepCopyObject().(client.Object)
		Eventually(func(ctx context.Context) error {
			o = shipped.DeepCopyObject().(client.Object)
			err := k8s.Create(ctx, o)
			if apierrors.IsAlreadyExists(err) {
				_ = k8s.Delete(ctx, o)
			}
			return err
		}).WithContext(ctx).Should(Succeed(), "%s %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed()) })
	}
}
