//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// backupNewer moves its API on: 2.0.0 stores v2 and still serves v1, 3.0.0
// serves v2 alone.
var backupNewer = servedFrom(samplePackage("backup-newer", "1.0.0", "2.0.0", "3.0.0"),
	map[string][]string{"2.0.0": {"v1", "v2"}, "3.0.0": {"v2"}})

// servedFrom sets the versions the CRDs of the package id serve, per version
// of the package (fixtures.Package.Served).
func servedFrom(id string, served map[string][]string) string {
	p := packages[id]
	p.Served = served
	packages[id] = p
	return id
}

// statefulSetOf makes what an operator that runs its database as a
// StatefulSet makes for owner: a StatefulSet of no replica (no kubelet
// here) with owner as its controller, and the claim of its first pod's
// volume, owned by the StatefulSet as its controller sets it when the
// claims go with the set (whenDeleted: Delete: no controller flag),
// holding bytes. It returns the claim's key and the sums of its volume.
func statefulSetOf(ctx context.Context, csi *cluster.CSI, owner *unstructured.Unstructured) (*appsv1.StatefulSet, client.ObjectKey, map[string]string) {
	GinkgoHelper()
	ref := metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
		Controller: new(bool), BlockOwnerDeletion: new(bool)}
	*ref.Controller, *ref.BlockOwnerDeletion = true, true
	labels := map[string]string{"app": owner.GetName()}
	none := int32(0)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: owner.GetName(), OwnerReferences: []metav1.OwnerReference{ref}},
		Spec: appsv1.StatefulSetSpec{Replicas: &none, ServiceName: owner.GetName(), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.k8s.io/pause:3.10"}}}},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}}}
	Expect(kc.Client.Create(ctx, sts)).To(Succeed())
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: "data-" + owner.GetName() + "-0"}
	sums := claimWithBytes(ctx, csi, key, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID})
	return sts, key, sums
}

// ownersAt reads the ownerReferences of the object of kind gvk at key.
func ownersAt(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) []metav1.OwnerReference {
	GinkgoHelper()
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(gvk)
	Expect(kc.Client.Get(ctx, key, o)).To(Succeed(), "%s %s", gvk.Kind, key)
	return o.OwnerReferences
}

// scaleOperator scales the operator's Deployment to replicas, as kubectl
// scale does, and, to zero, waits until its pods are gone.
func scaleOperator(ctx context.Context, deployment client.ObjectKey, replicas int32) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(kc.Client.Get(ctx, deployment, d)).To(Succeed())
	base := d.DeepCopy()
	d.Spec.Replicas = &replicas
	Expect(kc.Client.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
	if replicas > 0 {
		return
	}
	Eventually(func(g Gomega, ctx context.Context) {
		g.Expect(kc.Client.Get(ctx, deployment, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", d.Generation))
		g.Expect(d.Status.Replicas).To(BeZero())
	}).WithContext(ctx).Should(Succeed(), "the pods of Deployment %s go", deployment)
}

// operatorState reads the replicas of the operator's Deployment and its CSV's phase.
func operatorState(ctx context.Context, deployment client.ObjectKey, csv client.ObjectKey) (int32, operatorsv1alpha1.ClusterServiceVersionPhase) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(kc.Client.Get(ctx, deployment, d)).To(Succeed())
	c := &operatorsv1alpha1.ClusterServiceVersion{}
	Expect(kc.Client.Get(ctx, csv, c)).To(Succeed())
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return replicas, c.Status.Phase
}

// widgetAt reads the widget ns/name at version, nil when it is not there.
func widgetAt(ctx context.Context, in *install, version, ns, name string) *unstructured.Unstructured {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(in.crd().GVK().GroupKind().WithVersion(version))
	err := kc.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return u
}

var _ = Describe("An undo of one operand, into a newer operator, with real Velero", func() {
	BeforeEach(skipUnlessLocalVelero)

	It("brings back one operand with what it owned, a StatefulSet's claim included, into an operator that stores v2 and still serves v1; the rest once it serves v2 alone: no Restore of what cannot come back, exit 4 saying why", func(ctx SpecContext) {
		in := newInstall(backupNewer)
		in.csv = in.pkg.CSVName("1.0.0")
		in.sub.StartingCSV, in.sub.Manual = in.csv, true
		in.create(ctx, withVelero)
		csi := startCSI(ctx)
		a, b := in.ns("a"), in.ns("b")
		gcWatches(ctx, in.crd(), a)
		db1, db2 := fixtures.Operand(in.crd(), a, "db1"), fixtures.Operand(in.crd(), b, "db2")
		for _, u := range []*unstructured.Unstructured{db1, db2} {
			u.Object["spec"] = map[string]any{"version": "15." + u.GetName()}
			Expect(kc.Client.Create(ctx, u)).To(Succeed())
			in.lastOperand = u.GetCreationTimestamp()
		}
		held1, held2 := withDependents(ctx, csi, db1), withDependents(ctx, csi, db2)
		sts, stsClaim, stsVolume := statefulSetOf(ctx, csi, db1)
		startVeleroCSI(ctx)

		By("uninstalling 1.0.0: the widgets, their Secrets, ConfigMaps and claims, the StatefulSet and its claim go, backed up first")
		in.uninstall(ctx)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		for _, w := range []*unstructured.Unstructured{db1, db2} {
			Eventually(func(ctx context.Context) bool { return dependentsGone(ctx, w.GetNamespace(), w.GetName()) }).WithContext(ctx).Should(BeTrue())
		}
		Eventually(func(ctx context.Context) bool {
			return apierrors.IsNotFound(kc.Client.Get(ctx, stsClaim, &corev1.PersistentVolumeClaim{}))
		}).WithContext(ctx).Should(BeTrue(), "the garbage collector deletes the StatefulSet's claim after the StatefulSet")
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Dependents", BeEquivalentTo(8)), HaveField("Volumes", BeEquivalentTo(3)))),
			"two Secrets, ConfigMaps and claims, the StatefulSet and its claim; three volumes")
		backup := rec.Status.Backup.Name

		By("reinstalling the operator at 2.0.0, whose CRD stores v2 and still serves v1")
		newer := &install{id: in.id, pkg: in.pkg, sub: in.sub, csv: in.pkg.CSVName("2.0.0")}
		newer.sub.StartingCSV = newer.csv
		Expect(kc.Resubscribe(ctx, newer.sub)).To(Succeed())
		Expect(kc.ApproveInstallPlan(ctx, newer.sub, newer.csv)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, newer.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())

		By("undoing db1 beside the operator that runs again: refused, naming its Deployment and how to stop it; nothing restored")
		out, code := undo(ctx, "--namespace", in.sub.Namespace, in.csv, "--only", "Widget/"+a+"/db1")
		Expect(code).To(Equal(3), out)
		deployment := client.ObjectKey{Namespace: in.sub.Namespace, Name: fixtures.SampleServiceAccount}
		Expect(out).To(And(ContainSubstring(fmt.Sprintf("Deployment %s of CSV %s/%s has 1 replica", deployment, in.sub.Namespace, newer.csv)),
			ContainSubstring(fmt.Sprintf("kubectl scale deployment -n %s %s --replicas=0", deployment.Namespace, deployment.Name)), ContainSubstring("nothing was restored")))
		Expect(restores(ctx, backup)).To(BeZero())

		By("stopping the operator for the undo, as the undo says: OLM v0 leaves its Deployment scaled to zero, its CSV Succeeded once OLM looked again")
		stopped := time.Now()
		scaleOperator(ctx, deployment, 0)
		// The replicas are what the undo needs. The CSV may read Failed for a
		// moment (docs/backup.md), so its phases go into the report.
		seen := map[operatorsv1alpha1.ClusterServiceVersionPhase]bool{}
		Consistently(func(ctx context.Context) int32 {
			replicas, phase := operatorState(ctx, deployment, newer.csvKey())
			seen[phase] = true
			return replicas
		}).WithContext(ctx).WithTimeout(20*time.Second).WithPolling(500*time.Millisecond).Should(BeZero(), "OLM v0 leaves a Deployment scaled to zero")
		Eventually(func(ctx context.Context) operatorsv1alpha1.ClusterServiceVersionPhase {
			_, phase := operatorState(ctx, deployment, newer.csvKey())
			return phase
		}).WithContext(ctx).Should(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "OLM v0 finds the Deployment of no replica healthy")
		phases := slices.Sorted(maps.Keys(seen))
		AddReportEntry("OLM v0 and a Deployment scaled to zero", fmt.Sprintf("0 replicas for %s after the scale, the CSV %v meanwhile, Succeeded at the end",
			time.Since(stopped).Round(time.Second), phases))

		By("undoing db1 alone: it comes back with all it owned, transitively, linked as it was; db2 and what it owned stay gone")
		out, code = undo(ctx, "--namespace", in.sub.Namespace, in.csv, "--only", "Widget/"+a+"/db1")
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(ContainSubstring("6 restored, 0 present already, 0 missing"), MatchRegexp(`Undo \S+: Completed`)))
		// A name, not the letters: a volume's or a snapshot's random id may hold "db2" (d8493db25b82).
		Expect(out).NotTo(MatchRegexp(`\bdb2\b`), "the table lists db1's closure alone")
		Expect(restores(ctx, backup)).To(Equal(1))
		back := widgetAt(ctx, in, "v1", a, "db1")
		Expect(back).NotTo(BeNil())
		Expect(back.Object["spec"]).To(Equal(db1.Object["spec"]))
		Expect(back.GetUID()).NotTo(Equal(db1.GetUID()), "restored: a new UID")
		Expect(dataOf(ctx, csi, a, "db1")).To(Equal(held1), "db1's Secret, ConfigMap and volume bytes")
		dir, err := csi.VolumePath(ctx, stsClaim.Namespace, stsClaim.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(volumeSums(dir)).To(Equal(stsVolume), "the StatefulSet's volume holds the same bytes")
		secretKey, configKey, claimKey := dependentKeys(a, "db1")
		controlledByDB1 := ConsistOf(And(HaveField("UID", back.GetUID()), HaveField("Kind", "Widget"),
			HaveField("Controller", HaveValue(BeTrue())), HaveField("BlockOwnerDeletion", HaveValue(BeTrue()))))
		core := corev1.SchemeGroupVersion
		for gvk, key := range map[schema.GroupVersionKind]client.ObjectKey{core.WithKind("Secret"): secretKey, core.WithKind("ConfigMap"): configKey,
			core.WithKind("PersistentVolumeClaim"): claimKey, appsv1.SchemeGroupVersion.WithKind("StatefulSet"): client.ObjectKeyFromObject(sts)} {
			Expect(ownersAt(ctx, gvk, key)).To(controlledByDB1, "%s %s is the restored db1's again", gvk.Kind, key)
		}
		stsNow := &appsv1.StatefulSet{}
		Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(sts), stsNow)).To(Succeed())
		Expect(stsNow.UID).NotTo(Equal(sts.UID))
		Expect(ownersAt(ctx, core.WithKind("PersistentVolumeClaim"), stsClaim)).To(ConsistOf(And(HaveField("UID", stsNow.UID), HaveField("Kind", "StatefulSet"),
			HaveField("Controller", BeNil()), HaveField("BlockOwnerDeletion", BeNil()))), "the chain followed: the claim is the restored StatefulSet's, as the StatefulSet controller set it")
		Expect(widgetAt(ctx, in, "v1", b, "db2")).To(BeNil())
		Expect(dependentsGone(ctx, b, "db2")).To(BeTrue())
		Expect(undos(ctx, in.sub.Namespace, in.csv)).To(ContainElement(And(HaveField("Spec.Only", ConsistOf("Widget/"+a+"/db1")), HaveField("Status.Phase", cleanupv1alpha1.UndoCompleted),
			HaveField("Status.Restored", BeEquivalentTo(6)), HaveField("Status.OwnersLinked", BeEquivalentTo(5)))))
		scaleOperator(ctx, deployment, 1)

		By("upgrading to 3.0.0, whose CRD serves v2 alone: db1 stays")
		newest := &install{id: in.id, pkg: in.pkg, sub: newer.sub, csv: in.pkg.CSVName("3.0.0")}
		Expect(kc.ApproveInstallPlan(ctx, newer.sub, newest.csv)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, newest.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		newer.waitCSVGone(ctx)
		Expect(kc.WaitForSubscriptionInstalled(ctx, newer.sub, newest.csv)).To(Succeed())
		db1Now := widgetAt(ctx, in, "v2", a, "db1")
		Expect(db1Now).NotTo(BeNil())
		By("db1's Secret, ConfigMap, claim and StatefulSet name it at v2, the version served now, and stay: the garbage collector finds their owner")
		for gvk, key := range map[schema.GroupVersionKind]client.ObjectKey{core.WithKind("Secret"): secretKey, core.WithKind("ConfigMap"): configKey,
			core.WithKind("PersistentVolumeClaim"): claimKey, appsv1.SchemeGroupVersion.WithKind("StatefulSet"): client.ObjectKeyFromObject(sts)} {
			Consistently(func(ctx context.Context) []metav1.OwnerReference { return ownersAt(ctx, gvk, key) }).WithContext(ctx).WithTimeout(3*time.Second).
				Should(ConsistOf(And(HaveField("APIVersion", in.crd().Group+"/v2"), HaveField("UID", db1Now.GetUID()))), "%s %s", gvk.Kind, key)
		}

		By("undoing the rest, the 3.0.0 operator stopped for it: db2 cannot come back at v1, which its CRD no longer serves; Velero is given none of it, the rest comes back, exit 4 says why")
		// OLM may apply 3.0.0's Deployment again while it settles: the undo
		// then exits 3 (the operator runs), writing nothing, and is run
		// again once it is stopped, as a user would.
		Eventually(func(ctx context.Context) int {
			scaleOperator(ctx, deployment, 0)
			out, code = undo(ctx, "--namespace", in.sub.Namespace, in.csv)
			return code
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(5*time.Second).ShouldNot(Equal(3), "3.0.0's operator stays stopped")
		Expect(code).To(Equal(4), out)
		Expect(out).To(And(ContainSubstring(fmt.Sprintf("the Backup holds Widget.%s at version v1, which its CRD no longer serves (it serves v2)", in.crd().Group)),
			ContainSubstring("3 restored, 6 present already, 1 missing")))
		Expect(restores(ctx, backup)).To(Equal(2))
		Expect(widgetAt(ctx, in, "v2", b, "db2")).To(BeNil())
		Expect(dataOf(ctx, csi, b, "db2")).To(Equal(held2), "db2's Secret, ConfigMap and volume bytes come back all the same")
		secretKey, _, _ = dependentKeys(b, "db2")
		Expect(ownersAt(ctx, core.WithKind("Secret"), secretKey)).To(BeEmpty(), "its owner did not come back: left out, never a UID that is not there")
		Expect(undos(ctx, in.sub.Namespace, in.csv)).To(ContainElement(And(HaveField("Spec.Only", BeEmpty()), HaveField("Status.Phase", cleanupv1alpha1.UndoPartiallyFailed),
			HaveField("Status.RestorePhase", "Completed"), HaveField("Status.Missing", BeEquivalentTo(1)),
			HaveField("Status.NotBack", ContainElement(HaveField("Name", "db2"))))))
		AddReportEntry("The undo into 3.0.0", strings.TrimSpace(out))
	})
})
