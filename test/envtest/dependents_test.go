package envtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// snapshotsInstalled: external-snapshotter's CRDs are in the suite's control plane.
var snapshotsInstalled bool

// snapshotClassFor installs external-snapshotter's CRDs unless they are,
// and makes a VolumeSnapshotClass of driver labelled for Velero.
func snapshotClassFor(ctx context.Context, driver string) {
	GinkgoHelper()
	if !snapshotsInstalled {
		paths, err := controlplane.SnapshotCRDs()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: paths})
		Expect(err).NotTo(HaveOccurred())
		snapshotsInstalled = true
	}
	class := &unstructured.Unstructured{Object: map[string]any{"driver": driver, "deletionPolicy": "Delete"}}
	class.SetGroupVersionKind(schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass"})
	class.SetName(driver)
	class.SetLabels(map[string]string{decide.SnapshotClassLabel: "true"})
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, class))).To(Succeed())
}

// ownerRef is an ownerReference to obj, as an operator sets it on what it makes.
func ownerRef(obj client.Object) metav1.OwnerReference {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID()}
}

// configMap creates a ConfigMap owned by owners.
func configMap(ctx context.Context, ns, name string, owners ...client.Object) *corev1.ConfigMap {
	GinkgoHelper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": name}}
	for _, o := range owners {
		cm.OwnerReferences = append(cm.OwnerReferences, ownerRef(o))
	}
	Expect(k8s.Create(ctx, cm)).To(Succeed())
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return cm
}

// claim creates a PersistentVolumeClaim owned by owner and bound to a new
// PersistentVolume of that name: a CSI volume of driver, or a hostPath
// volume when driver is "". The binder controller binds them.
func claim(ctx context.Context, ns, name, driver string, owner client.Object) {
	GinkgoHelper()
	pvName := ns + "-" + name
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}, Spec: corev1.PersistentVolumeSpec{
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
		ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: name}}}
	if driver == "" {
		pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: "/tmp/" + pvName}
	} else {
		pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: pvName}
	}
	Expect(k8s.Create(ctx, pv)).To(Succeed())
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{ownerRef(owner)}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pvName, StorageClassName: new(string),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	Expect(k8s.Create(ctx, pvc)).To(Succeed())
	Eventually(func(ctx context.Context) corev1.PersistentVolumeClaimPhase {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
		return pvc.Status.Phase
	}).WithContext(ctx).Should(Equal(corev1.ClaimBound))
}

// w1Claim makes a claim called name in the scenario's namespace a, of a
// volume of driver, owned by its operand w1 (installWithOperand's).
func w1Claim(ctx context.Context, s *scenario, name, driver string) {
	GinkgoHelper()
	w1 := &unstructured.Unstructured{}
	w1.SetGroupVersionKind(s.crd(0).GVK())
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.ns("a"), Name: "w1"}, w1)).To(Succeed())
	claim(ctx, s.ns("a"), name, driver, w1)
}

// restoresIn counts the Restores in Velero's namespace.
func restoresIn(ctx context.Context, namespace string) int {
	GinkgoHelper()
	return veleroObjectsIn(ctx, namespace, "RestoreList")
}

// backupsIn counts the Backups in Velero's namespace.
func backupsIn(ctx context.Context, namespace string) int {
	GinkgoHelper()
	return veleroObjectsIn(ctx, namespace, "BackupList")
}

// veleroObjectsIn counts the objects of Velero's list kind in namespace.
func veleroObjectsIn(ctx context.Context, namespace, list string) int {
	GinkgoHelper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: list})
	Expect(k8s.List(ctx, l, client.InNamespace(namespace))).To(Succeed())
	return len(l.Items)
}

// names are the objects' Kind namespace/name.
func names(hs []decide.Held) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

// closureSpecs are the specs of what an uninstall destroys with its
// operands (the ownerReference closure), backed up first: they run in the
// backup gate's ordered container, after its first spec, which needs
// Velero's CRDs absent when it begins.
func closureSpecs() {
	It("backs up, by name, what the garbage collector deletes with the operands, transitively and across scopes, and nothing it keeps", func(ctx SpecContext) {
		s := newScenario("dep")
		s.install.CRDs = append(s.install.CRDs, fixtures.CRD{Group: s.install.CRDs[0].Group, Kind: "Gizmo", Plural: "gizmos", ClusterScoped: true})
		s.createPolicy(ctx, backupTo("velero-dep"))
		v := startFakeVelero(ctx, "velero-dep", "Available")
		snapshotClassFor(ctx, "csi.dep.example.com")
		s.installWithOperand(ctx)
		a := s.ns("a")
		w1 := &unstructured.Unstructured{}
		w1.SetGroupVersionKind(s.crd(0).GVK())
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: a, Name: "w1"}, w1)).To(Succeed())
		g1 := s.operand(ctx, 1, "", s.id+"-g1")

		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "w1-password", OwnerReferences: []metav1.OwnerReference{ownerRef(w1)}}}
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		ofSecret := configMap(ctx, a, "of-password", secret)       // transitive
		keeper := configMap(ctx, a, "keeper")                      // stays: nothing deletes it
		shared := configMap(ctx, a, "shared", w1, keeper)          // a second owner that stays
		x := configMap(ctx, a, "cycle-x", w1)                      // x and y own each other...
		y := configMap(ctx, a, "cycle-y", x)                       // ...
		x.OwnerReferences = append(x.OwnerReferences, ownerRef(y)) // ...and y keeps x
		Expect(k8s.Update(ctx, x)).To(Succeed())
		claim(ctx, a, "data", "csi.dep.example.com", w1)
		gRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-g1-role", OwnerReferences: []metav1.OwnerReference{ownerRef(g1)}}}
		Expect(k8s.Create(ctx, gRole)).To(Succeed())
		gSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns("b"), Name: "g1-creds", OwnerReferences: []metav1.OwnerReference{ownerRef(g1)}}}
		Expect(k8s.Create(ctx, gSecret)).To(Succeed())
		want := []string{"ClusterRole " + s.id + "-g1-role", "ConfigMap " + a + "/of-password", "PersistentVolumeClaim " + a + "/data",
			"Secret " + a + "/w1-password", "Secret " + s.ns("b") + "/g1-creds"}

		By("planning: csv-cleaner plan lists the dependents and the volume apart from the deletions")
		s.afterOperands()
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dryrun.Foresee(ctx, k8s, disc, dry, nil)).To(Succeed())
		Expect(names(dry.Dependents)).To(ConsistOf(want))
		Expect(dry.Volumes).To(ConsistOf(And(HaveField("Claim.Name", "data"), HaveField("Snapshot", true), HaveField("SnapshotClass", "csi.dep.example.com"),
			HaveField("Driver", "csi.dep.example.com"))))
		Expect(dry.Backup).To(HaveValue(And(HaveField("Dependents", 5), HaveField("Volumes", 1),
			HaveField("Expected", ContainSubstring("1 claims' CSI snapshots at its 8 item-block workers")))))

		By("uninstalling: the Backup names them, and is verified to hold them, before the first delete")
		s.uninstall(ctx)
		rec := s.record(ctx)
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Dependents", BeEquivalentTo(5)), HaveField("Volumes", BeEquivalentTo(1)))))
		name := rec.Status.Backup.Name
		policy := v.backupPolicy(ctx, name)
		Expect(policy.NamespacedFilterPolicies).To(ContainElement(HaveField("ResourceFilters", ContainElements(
			veleroFilter{Kinds: []string{"secrets"}, Names: []string{"w1-password"}},
			veleroFilter{Kinds: []string{"configmaps"}, Names: []string{"of-password"}},
			veleroFilter{Kinds: []string{"persistentvolumeclaims"}, Names: []string{"data"}}))))
		Expect(policy.ClusterScopedFilterPolicy.ResourceFilters).To(ContainElements(
			veleroFilter{Kinds: []string{"clusterroles.rbac.authorization.k8s.io"}, Names: []string{s.id + "-g1-role", s.id + "-role"}}))
		By("leaving the claim's PersistentVolume out, which Velero's workers would record at once: the claim's snapshot is read from the Backup's contents")
		Expect(policy.IncludeExcludePolicy.ExcludedClusterScopedResources).To(Equal([]string{"persistentvolumes"}))
		Expect(v.list(name)).NotTo(HaveKey("v1/PersistentVolume"))
		Expect(rec.Status.Backup.Expected).To(ContainSubstring("1 claims' CSI snapshots at its 8 item-block workers"), "the time the Backup takes, foreseen from the workers Velero's Deployment runs")
		destroyed, err := velero.Client{Live: k8s, Namespace: "velero-dep"}.ReadDestroyed(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(destroyed.Dependents)).To(ConsistOf(want))
		Expect(names(destroyed.Deleted)).To(ContainElements("Widget."+s.crd(0).Group+" "+a+"/w1", "Gizmo."+s.crd(0).Group+" "+s.id+"-g1"))
		Expect(v.list(name)["v1/Secret"]).To(ConsistOf(a+"/w1-password", s.ns("b")+"/g1-creds"))

		By("the garbage collector deleting the dependents, and keeping what has an owner that stays")
		// An operand deleted before the collector maps its new kind (it
		// rereads the kinds every 30 s) is looked up again with a growing
		// backoff: its dependents may take longer than 30 s to go.
		for _, gone := range []client.Object{secret, ofSecret, gRole, gSecret} {
			Eventually(func(ctx context.Context) bool { return present(ctx, gone) }).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeFalse(), gone.GetName())
		}
		Eventually(func(ctx context.Context) bool {
			return present(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "data"}})
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(BeFalse())
		for _, stays := range []client.Object{keeper, shared, x, y} {
			Consistently(func(ctx context.Context) bool { return present(ctx, stays) }).WithContext(ctx).WithTimeout(time.Second).Should(BeTrue(), stays.GetName())
		}

		By("undoing while the operator runs again (installed first): it finds the Backup, says the operator runs, and makes nothing")
		operator := s.reinstallRunning(ctx, 1)
		owner := decide.Owner{Kind: decide.KindCSV, Namespace: s.install.Namespace, Name: s.install.CSVName}
		res, err := undo.Run(ctx, k8s, undo.Options{Owner: owner, VeleroNamespace: "velero-dep"})
		var running *undo.OperatorRunningError
		Expect(errors.As(err, &running)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("Deployment " + s.install.Namespace + "/" + operator.Name)))
		Expect(res).To(HaveValue(And(HaveField("Backup", "velero-dep/"+name), HaveField("From", "the uninstall's record"), HaveField("Restore", ""))))
		Expect(restoresIn(ctx, "velero-dep")).To(BeZero())

		By("the record gone (with its namespace, say): the Backup is found from its own labels")
		Expect(k8s.Delete(ctx, s.record(ctx))).To(Succeed())
		res, err = undo.Run(ctx, k8s, undo.Options{Owner: owner, VeleroNamespace: "velero-dep"})
		Expect(errors.As(err, &running)).To(BeTrue(), "%v", err)
		Expect(res).To(HaveValue(And(HaveField("Backup", "velero-dep/"+name), HaveField("From", ContainSubstring("labels")))))
		_, err = undo.Run(ctx, k8s, undo.Options{Owner: decide.Owner{Kind: decide.KindCSV, Namespace: s.install.Namespace, Name: "another.v1"}, VeleroNamespace: "velero-dep"})
		Expect(err).To(MatchError(ContainSubstring("no verified backup")))
	})

	It("plans the snapshots of a namespace's many claims, read by one LIST, as it plans them read a GET each", func(ctx SpecContext) {
		s := newScenario("depmany")
		s.createPolicy(ctx, backupTo("velero-depmany"))
		snapshotClassFor(ctx, "csi.depmany.example.com")
		s.installWithOperand(ctx)
		a := s.ns("a")
		var want []gomegatypes.GomegaMatcher
		for i := range 10 {
			name := fmt.Sprintf("data-%d", i)
			w1Claim(ctx, s, name, "csi.depmany.example.com")
			want = append(want, And(HaveField("Claim.Name", name), HaveField("VolumeName", a+"-"+name), HaveField("Driver", "csi.depmany.example.com"),
				HaveField("Snapshot", true), HaveField("SnapshotClass", "csi.depmany.example.com")))
		}
		w1Claim(ctx, s, "restored", "csi.depmany.example.com")
		restored := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "restored"}}
		Expect(k8s.Patch(ctx, restored, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+decide.VeleroMustIncludeAnnotation+`":"true"}}}`)))).To(Succeed())
		want = append(want, And(HaveField("Claim.Name", "restored"), HaveField("Problem", HaveValue(HaveField("Reason", cleanupv1alpha1.BlockedClaimMarkedByRestore)))))

		By("planning: every claim's volume, driver and snapshot class, and the annotation a Restore left")
		s.afterOperands()
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dryrun.Foresee(ctx, k8s, disc, dry, nil)).To(Succeed())
		Expect(dry.Volumes).To(ConsistOf(want))

		By("reading the same claims a GET each, as a scan that counted many more claims and volumes than are wanted does: the same decisions")
		crowded := &dependents.Scan{}
		var claims []decide.Node
		for _, v := range dry.Volumes {
			claims = append(claims, decide.Node{Held: v.Claim})
		}
		for i := range 1000 {
			crowded.Nodes = append(crowded.Nodes, decide.Node{Held: decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: a, Name: fmt.Sprint("other-", i)}},
				decide.Node{Held: decide.Held{Kind: "PersistentVolume", Resource: "persistentvolumes", Name: fmt.Sprint("other-", i)}})
		}
		byGet, err := dependents.Scanner{Discovery: disc, Reader: k8s}.Volumes(ctx, crowded, claims, &cleanupv1alpha1.VeleroBackup{})
		Expect(err).NotTo(HaveOccurred())
		Expect(byGet).To(ConsistOf(want))
		Expect(byGet).To(ConsistOf(dry.Volumes))
	})

	It("blocks on a claim whose volume cannot be snapshotted, naming it, until the policy accepts its object alone", func(ctx SpecContext) {
		s := newScenario("depvol")
		s.createPolicy(ctx, backupTo("velero-depvol"))
		startFakeVelero(ctx, "velero-depvol", "Available")
		s.installWithOperand(ctx)
		w1Claim(ctx, s, "local", "")
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedVolumeNotSnapshottable)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("PersistentVolumeClaim "+s.ns("a")+"/local"), ContainSubstring("not a CSI volume"),
			ContainSubstring("volumeData: ObjectsOnly")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))

		By("accepting, in so many words, a backup of the claim's object alone")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.policy), s.policy)).To(Succeed())
		s.policy.Spec.Backup.Velero.VolumeData = cleanupv1alpha1.VolumeDataObjectsOnly
		Expect(k8s.Update(ctx, s.policy)).To(Succeed())
		s.csvGone(ctx)
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Dependents", BeEquivalentTo(1)), HaveField("Volumes", BeZero()))))
	})

	It("blocks on a Backup without a volume's snapshot, naming the claim, and makes a new Backup by itself", func(ctx SpecContext) {
		s := newScenario("depsnap")
		s.createPolicy(ctx, backupTo("velero-depsnap"))
		v := startFakeVelero(ctx, "velero-depsnap", "Available")
		v.snapshotsEnd("failed")
		snapshotClassFor(ctx, "csi.depsnap.example.com")
		s.installWithOperand(ctx)
		w1Claim(ctx, s, "data", "csi.depsnap.example.com")
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupIncomplete)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("without a snapshot of 1 of the 1 volumes"), ContainSubstring("PersistentVolumeClaim "+s.ns("a")+"/data")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))

		v.snapshotsEnd("succeeded")
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		s.csvGone(ctx)
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Attempt", BeEquivalentTo(2)), HaveField("Volumes", BeEquivalentTo(1)))))
	})

	It("blocks, before any Backup, on a claim that carries the annotation Velero's Restore left, naming the command that removes it", func(ctx SpecContext) {
		s := newScenario("depmark")
		s.createPolicy(ctx, backupTo("velero-depmark"))
		startFakeVelero(ctx, "velero-depmark", "Available").snapshotsEnd("succeeded")
		snapshotClassFor(ctx, "csi.depmark.example.com")
		s.installWithOperand(ctx)
		w1Claim(ctx, s, "data", "csi.depmark.example.com")
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns("a"), Name: "data"}}
		mark := func(value string) client.Patch {
			return client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+decide.VeleroMustIncludeAnnotation+`":`+value+`}}}`))
		}
		Expect(k8s.Patch(ctx, pvc, mark(`"true"`))).To(Succeed())
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedClaimMarkedByRestore)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("PersistentVolumeClaim "+s.ns("a")+"/data"),
			ContainSubstring("kubectl -n "+s.ns("a")+" annotate persistentvolumeclaim data "+decide.VeleroMustIncludeAnnotation+"-")))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))
		Expect(backupsIn(ctx, "velero-depmark")).To(BeZero(), "no Backup that Velero would take the volume into")

		By("the annotation removed, as the message says: the uninstall completes")
		Expect(k8s.Patch(ctx, pvc, mark("null"))).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		s.csvGone(ctx)
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Volumes", BeEquivalentTo(1)))))
	})

	It("keeps, and names, an operand of a target namespace added after the Backup was verified: no Backup holds it", func(ctx SpecContext) {
		s := newScenario("widen")
		s.createPolicy(ctx, backupTo("velero-widen"))
		startFakeVelero(ctx, "velero-widen", "Available")
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "held", "test.csv-cleaner.io/hold") // finalized slowly: the uninstall goes on after the gate
		s.operand(ctx, 0, s.ns("c"), "wc")                               // in a namespace the operator does not target yet
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)
		Eventually(func(ctx context.Context) bool {
			rec := &cleanupv1alpha1.CSVCleanup{}
			return k8s.Get(ctx, s.install.Key(), rec) == nil && rec.Status.Backup != nil && rec.Status.Backup.Verified
		}).WithContext(ctx).Should(BeTrue())
		Expect(s.record(ctx).Status.Backup.Namespaces).To(ConsistOf(s.ns("a"), s.ns("b")))

		By("widening the OperatorGroup to a namespace that holds an operand, while an operand is still being finalized")
		og := &operatorsv1.OperatorGroup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.install.Namespace, Name: s.install.OperatorGroupName()}, og)).To(Succeed())
		widened := []string{s.ns("a"), s.ns("b"), s.ns("c")}
		og.Spec.TargetNamespaces = widened
		Expect(k8s.Update(ctx, og)).To(Succeed())
		og.Status.Namespaces = widened
		Expect(k8s.Status().Update(ctx, og)).To(Succeed())
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		Expect(k8s.Get(ctx, s.install.Key(), csv)).To(Succeed())
		csv.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] = s.ns("a") + "," + s.ns("b") + "," + s.ns("c")
		Expect(k8s.Update(ctx, csv)).To(Succeed())
		Eventually(func(ctx context.Context) []string { return kept(s.record(ctx), "Widget."+s.crd(0).Group) }).WithContext(ctx).
			Should(ContainElement(cleanupv1alpha1.KeepNotInBackup + "=1"))
		Expect(s.remaining(ctx)).To(ContainElement("Widget " + s.ns("c") + "/wc"))

		By("letting the last operand go: the uninstall completes, the operand no Backup holds is still there, named in the record")
		held := fixtures.Operand(s.crd(0), s.ns("a"), "held")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
		held.SetFinalizers(nil)
		Expect(k8s.Update(ctx, held)).To(Succeed())
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(ContainElement("Widget " + s.ns("c") + "/wc"))
		Expect(s.record(ctx).Status.Kept).To(ContainElement(And(HaveField("Name", "wc"), HaveField("Namespace", s.ns("c")), HaveField("Reason", cleanupv1alpha1.KeepNotInBackup))))
	})
}
