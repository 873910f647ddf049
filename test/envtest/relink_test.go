package envtest_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// controllerRef is an ownerReference to obj as a controller sets it.
func controllerRef(obj client.Object) metav1.OwnerReference {
	r := ownerRef(obj)
	yes := true
	r.Controller, r.BlockOwnerDeletion = &yes, &yes
	return r
}

// ownersOf reads obj's ownerReferences as they are now.
func ownersOf(ctx context.Context, obj client.Object) []metav1.OwnerReference {
	GinkgoHelper()
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), o)).To(Succeed())
	return o.OwnerReferences
}

// uidOf reads obj's UID as it is now.
func uidOf(ctx context.Context, obj client.Object) string {
	GinkgoHelper()
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), o)).To(Succeed())
	return string(o.UID)
}

// everyOwnerThere checks that each ownerReference of obj names an object
// that is there with that UID: a dangling one would make the garbage
// collector delete obj.
func everyOwnerThere(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	for _, r := range ownersOf(ctx, obj) {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		Expect(err).NotTo(HaveOccurred())
		m, err := k8s.RESTMapper().RESTMapping(gv.WithKind(r.Kind).GroupKind(), gv.Version)
		Expect(err).NotTo(HaveOccurred())
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(m.GroupVersionKind)
		key := client.ObjectKey{Name: r.Name}
		if m.Scope.Name() == "namespace" {
			key.Namespace = obj.GetNamespace()
		}
		Expect(k8s.Get(ctx, key, o)).To(Succeed(), "%s names %s %s", obj.GetName(), r.Kind, r.Name)
		Expect(o.UID).To(Equal(r.UID), "%s names %s %s by a UID that is not there", obj.GetName(), r.Kind, r.Name)
	}
}

// servedAt makes the scenario's CRD serve versions, v2 stored (added when
// absent, as an operator upgrade does), with no conversion webhook.
func (s *scenario) servedAt(ctx context.Context, versions ...string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd); err != nil {
			return err
		}
		if len(crd.Spec.Versions) == 1 {
			v2 := *crd.Spec.Versions[0].DeepCopy()
			v2.Name = "v2"
			crd.Spec.Versions = append(crd.Spec.Versions, v2)
		}
		for i := range crd.Spec.Versions {
			v := &crd.Spec.Versions[i]
			v.Served, v.Storage = slices.Contains(versions, v.Name), v.Name == "v2"
		}
		return k8s.Update(ctx, crd)
	}).WithContext(ctx).Should(Succeed())
}

// relinkSpecs are the specs of the undo's owner links (docs/backup.md,
// "Owners linked again"): they run in the backup gate's ordered container.
func relinkSpecs() {
	It("keeps a record of what an uninstall destroyed that outgrows a ConfigMap in parts, and reads it back whole", func(ctx SpecContext) {
		startFakeVelero(ctx, "velero-parts", "Available")
		v := velero.Client{Live: k8s, Writer: k8s, Namespace: "velero-parts"}
		b := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		b.SetGroupVersionKind(backupGVK)
		b.SetNamespace(v.Namespace)
		b.SetName("parts")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		d := &destroyed.Record{Owner: decide.Owner{Kind: decide.KindCSV, Namespace: "op", Name: "parts"}, Backup: "parts"}
		for i := range 40000 { // 10,000 operands and 30,000 dependents: their UIDs do not compress
			h := decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "ns", Name: fmt.Sprintf("s-%d", i)}
			d.Dependents = append(d.Dependents, h)
			d.Origins = append(d.Origins, decide.Origin{Object: h, UID: uuid.NewUUID(), Owners: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: uuid.NewUUID()}}})
		}
		Expect(v.KeepDestroyed(ctx, &velero.Backup{Name: "parts", UID: b.GetUID()}, decide.Owner{Kind: decide.KindCSV, Namespace: "op", Name: "parts"}, d)).To(Succeed())
		first := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: velero.DestroyedName("parts")}, first)).To(Succeed())
		Expect(first.Annotations).To(HaveKey(velero.PartsAnnotation))
		back, err := v.ReadDestroyed(ctx, "parts")
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Origins).To(Equal(d.Origins))
	})

	It("makes no Restore of a kind its CRD no longer serves at the version the Backup holds, says so per row, and says when a Restore does not move", func(ctx SpecContext) {
		s := newScenario("unserved")
		s.createPolicy(ctx, backupTo("velero-unserved"))
		v := startFakeVelero(ctx, "velero-unserved", "Available")
		s.installWithOperand(ctx)
		w1 := fixtures.Operand(s.crd(0), s.ns("a"), "w1")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w1), w1)).To(Succeed())
		cm := configMap(ctx, s.ns("a"), "w1-config", w1)
		s.uninstall(ctx)
		Eventually(func(ctx context.Context) bool { return present(ctx, cm) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(BeFalse())

		By("an upgrade that serves v2 alone: the Widget is not restored, its ConfigMap is")
		s.servedAt(ctx, "v2")
		owner := decide.Owner{Kind: decide.KindCSV, Namespace: s.install.Namespace, Name: s.install.CSVName}
		res, err := undo.Run(ctx, k8s, undo.Options{Owner: owner})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Rows).To(ContainElements(
			And(HaveField("Object.Name", "w1"), HaveField("State", undoplan.StateMissing),
				HaveField("Problem", ContainSubstring("the Backup holds Widget."+s.crd(0).Group+" at version v1, which its CRD no longer serves (it serves v2)"))),
			And(HaveField("Object.Name", "w1-config"), HaveField("State", undoplan.StateRestored), HaveField("OwnersLeftOut", ConsistOf("Widget."+s.crd(0).Group+" "+s.ns("a")+"/w1: not restored")))))
		Expect(res.Missing()).To(Equal(1))
		Expect(ownersOf(ctx, cm)).To(BeEmpty())

		By("v1 served again: the Widget comes back and its ConfigMap is linked to it; a Restore that does not move is said to")
		s.servedAt(ctx, "v1", "v2")
		v.endRestoresIn("")
		var progress bytes.Buffer
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = undo.Run(short, k8s, undo.Options{Owner: owner, Progress: &progress, Stalled: time.Second})
		cancel()
		Expect(err).To(HaveOccurred())
		Expect(progress.String()).To(MatchRegexp(`for \ds with no change: it has counted nothing to restore yet`))
		v.endRestoresIn("Completed")
		res, err = undo.Run(ctx, k8s, undo.Options{Owner: owner})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Missing()).To(BeZero())
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
	})

	It("links every restored object to its owners again, owners first and chains followed, leaves out an owner not restored, and never names a UID that is not there", func(ctx SpecContext) {
		s := newScenario("relink")
		s.createPolicy(ctx, backupTo("velero-relink"))
		v := startFakeVelero(ctx, "velero-relink", "Available")
		a := s.ns("a")
		s.create(ctx)
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(a)))).To(Succeed())
		tenant := configMap(ctx, a, "tenant") // never destroyed: it owns the operand, which the uninstall deletes all the same
		w1 := fixtures.Operand(s.crd(0), a, "w1")
		w1.SetOwnerReferences([]metav1.OwnerReference{ownerRef(tenant)})
		Expect(k8s.Create(ctx, w1)).To(Succeed())
		s.lastOperand = w1.GetCreationTimestamp()
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "w1-password", OwnerReferences: []metav1.OwnerReference{controllerRef(w1)}}}
		Expect(k8s.Create(ctx, password)).To(Succeed())
		password.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		labels := map[string]string{"app": "db"}
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "db", OwnerReferences: []metav1.OwnerReference{controllerRef(w1)}},
			Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db"}}}}}}
		Expect(k8s.Create(ctx, sts)).To(Succeed())
		sts.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
		dbConfig := configMap(ctx, a, "db-config") // owned by the StatefulSet owned by the operand
		dbConfig.OwnerReferences = []metav1.OwnerReference{controllerRef(sts)}
		Expect(k8s.Update(ctx, dbConfig)).To(Succeed())
		role := &rbacv1.ClusterRole{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.id + "-role"}, role)).To(Succeed())
		role.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"))
		token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "role-token", OwnerReferences: []metav1.OwnerReference{ownerRef(role)}}}
		Expect(k8s.Create(ctx, token)).To(Succeed())
		token.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		w2 := fixtures.Operand(s.crd(0), a, "w2")
		Expect(k8s.Create(ctx, w2)).To(Succeed())
		s.lastOperand = w2.GetCreationTimestamp()
		w2Password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "w2-password", OwnerReferences: []metav1.OwnerReference{controllerRef(w2)}}}
		Expect(k8s.Create(ctx, w2Password)).To(Succeed())
		w2Password.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		restored := []client.Object{w1, password, sts, dbConfig, token, w2, w2Password}

		By("uninstalling: the garbage collector deletes the dependents, the tenant stays")
		s.uninstall(ctx)
		for _, gone := range restored {
			Eventually(func(ctx context.Context) bool { return present(ctx, gone) }).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeFalse(), gone.GetName())
		}
		Expect(present(ctx, tenant)).To(BeTrue())

		By("a name the uninstall did not delete: nothing is restored")
		owner := decide.Owner{Kind: decide.KindCSV, Namespace: s.install.Namespace, Name: s.install.CSVName}
		only := func(name string) undoplan.UndoSelection {
			return undoplan.UndoSelection{Only: []undoplan.ObjectName{{Kind: "Widget", Namespace: a, Name: name}}}
		}
		_, err := undo.Run(ctx, k8s, undo.Options{Owner: owner, Selection: only("w3")})
		Expect(err).To(MatchError(ContainSubstring("the uninstall deleted no custom resource Widget/" + a + "/w3")))
		Expect(restoresIn(ctx, "velero-relink")).To(BeZero())

		By("undoing w1 alone, the Restore held in progress and the undo stopped: nothing is linked yet")
		v.endRestoresIn("")
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = undo.Run(short, k8s, undo.Options{Owner: owner, Selection: only("w1")})
		cancel()
		Expect(err).To(MatchError(ContainSubstring("run the undo again to follow it")))

		By("Velero restoring without the ownerReferences, the next undo follows the same Restore and links them")
		v.endRestoresIn("Completed")
		Eventually(func(ctx context.Context) bool { return present(ctx, w1) }).WithContext(ctx).Should(BeTrue())
		Expect(ownersOf(ctx, password)).To(BeEmpty(), "Velero strips them")
		res, err := undo.Run(ctx, k8s, undo.Options{Owner: owner, Selection: only("w1")})
		Expect(err).NotTo(HaveOccurred())
		Expect(restoresIn(ctx, "velero-relink")).To(Equal(1))
		Expect(res.Missing()).To(BeZero())
		Expect(names(rowObjects(res))).To(ConsistOf("Widget."+s.crd(0).Group+" "+a+"/w1", "Secret "+a+"/w1-password", "StatefulSet "+a+"/db", "ConfigMap "+a+"/db-config"),
			"w1 and what it owned, transitively, and nothing else")
		Expect(present(ctx, w2)).To(BeFalse())
		Expect(present(ctx, token)).To(BeFalse())
		Expect(res.Rows).To(ContainElement(And(HaveField("Object.Name", "db-config"), HaveField("Owners", ConsistOf("StatefulSet "+a+"/db")))))

		By("undoing the rest")
		res, err = undo.Run(ctx, k8s, undo.Options{Owner: owner})
		Expect(err).NotTo(HaveOccurred())
		Expect(restoresIn(ctx, "velero-relink")).To(Equal(2))
		Expect(res.Missing()).To(BeZero())
		Expect(ownersOf(ctx, w2Password)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w2)))))

		w1UID, stsUID := uidOf(ctx, w1), uidOf(ctx, sts)
		Expect(w1UID).NotTo(Equal(string(w1.GetUID())), "restored: a new UID")
		Expect(ownersOf(ctx, w1)).To(ConsistOf(HaveField("UID", tenant.UID)), "the tenant, never destroyed, as it was")
		Expect(ownersOf(ctx, password)).To(ConsistOf(And(HaveField("UID", BeEquivalentTo(w1UID)), HaveField("Controller", HaveValue(BeTrue())), HaveField("BlockOwnerDeletion", HaveValue(BeTrue())))))
		Expect(ownersOf(ctx, sts)).To(ConsistOf(HaveField("UID", BeEquivalentTo(w1UID))))
		Expect(ownersOf(ctx, dbConfig)).To(ConsistOf(HaveField("UID", BeEquivalentTo(stsUID))), "the chain followed")
		Expect(ownersOf(ctx, token)).To(BeEmpty(), "its ClusterRole was not restored")
		for _, o := range restored {
			everyOwnerThere(ctx, o)
		}
		Expect(res.Rows).To(ContainElement(And(HaveField("Object.Name", "role-token"), HaveField("OwnersLeftOut", ConsistOf("ClusterRole "+s.id+"-role: not restored")))))

		By("deleting the restored operand: the garbage collector deletes what it owns again, transitively")
		Expect(k8s.Delete(ctx, w1)).To(Succeed())
		for _, gone := range []client.Object{password, sts, dbConfig} {
			Eventually(func(ctx context.Context) bool { return present(ctx, gone) }).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeFalse(), gone.GetName())
		}
		Consistently(func(ctx context.Context) bool { return present(ctx, token) }).WithContext(ctx).WithTimeout(time.Second).Should(BeTrue())
	})
}

// rowObjects are the objects of an undo's rows.
func rowObjects(res *undo.Result) []decide.Held {
	out := make([]decide.Held, 0, len(res.Rows))
	for _, r := range res.Rows {
		out = append(out, r.Object)
	}
	return out
}
