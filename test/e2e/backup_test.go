//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	csvvelero "github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	backupRoundTrip = samplePackage("backup-trip")
	backupDown      = samplePackage("backup-down")
	backupLate      = samplePackage("backup-late")
	backupWiden     = samplePackage("backup-widen")
)

// ownerBackups are the Backups csv-cleaner made for the install's CSV, by
// name, with their phases (by the owner label it puts on them).
func ownerBackups(ctx context.Context, in *install) map[string]string {
	GinkgoHelper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "BackupList"})
	owner := decide.Owner{Kind: decide.KindCSV, Namespace: in.sub.Namespace, Name: in.csv}
	Expect(kc.Client.List(ctx, list, client.InNamespace(cluster.VeleroNamespace), client.MatchingLabels{csvvelero.OwnerLabel: owner.Hash()})).To(Succeed())
	out := map[string]string{}
	for _, b := range list.Items {
		out[b.GetName()], _, _ = unstructured.NestedString(b.Object, "status", "phase")
	}
	return out
}

// withVelero is a policy's backup with the harness's Velero.
func withVelero(p *cleanupv1alpha1.CleanupPolicySpec) {
	p.Backup = &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: cluster.VeleroNamespace}}
}

// order records, polling, when the record first said the Backup was
// verified and when the first widget went.
type order struct {
	mu                  sync.Mutex
	verified, firstGone time.Time
}

// watchOrder polls the install's record and widgets until ctx ends.
func watchOrder(ctx context.Context, in *install, widgets int) *order {
	o := &order{}
	go func() {
		for ctx.Err() == nil {
			// The widgets first, then the record: a widget seen gone with a
			// record read after it that is not verified yet is a delete
			// before the verification; both seen in one look is the order
			// of csv-cleaner's pass (the record written, then the deletes).
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(in.crd().GVK().GroupVersion().WithKind(in.crd().Kind + "List"))
			listed := kc.Client.List(ctx, list) == nil
			rec, err := in.record(ctx)
			verified := err == nil && rec.Status.Backup != nil && rec.Status.Backup.Verified
			now := time.Now()
			o.mu.Lock()
			if verified && o.verified.IsZero() {
				o.verified = now
			}
			if listed && len(list.Items) < widgets && o.firstGone.IsZero() {
				o.firstGone = now
			}
			o.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return o
}

func (o *order) times() (verified, firstGone time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.verified, o.firstGone
}

// startVelero starts Velero for the rest of the spec, once the operator is
// installed: Velero reads the API server's kinds at its start and every 5
// minutes after, and backs up nothing of a kind it does not know yet.
func startVelero(ctx context.Context) *cluster.Velero {
	GinkgoHelper()
	velero, err := kc.StartVelero(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(velero.Stop()).To(Succeed()) })
	return velero
}

var _ = Describe("An undoable uninstall, with real Velero", func() {
	BeforeEach(skipUnlessLocalVelero)

	It("backs up the operands, what the garbage collector deletes with them and their volumes' data, verified before the first delete; reinstalled, csv-cleaner undo brings back exactly that, data and all", func(ctx SpecContext) {
		in := newInstall(backupRoundTrip)
		in.create(ctx, withVelero)
		csi := startCSI(ctx)
		gcWatches(ctx, in.crd(), in.ns("a"))
		specs, held := map[string]map[string]any{}, map[string]data{}
		for i, w := range [][2]string{{in.ns("a"), "db1"}, {in.ns("b"), "db2"}} {
			u := fixtures.Operand(in.crd(), w[0], w[1])
			spec := map[string]any{"replicas": int64(i + 1), "storage": fmt.Sprintf("%dGi", 10*(i+1)), "version": "15." + w[1]}
			u.Object["spec"] = spec
			Expect(kc.Client.Create(ctx, u)).To(Succeed())
			in.lastOperand = u.GetCreationTimestamp()
			key := w[0] + "/" + w[1]
			specs[key], held[key] = spec, withDependents(ctx, csi, u)
		}
		By("an admin's ClusterRole, binding and Secret of a target namespace that the uninstall does not touch, deleted after it")
		unrelated := []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: in.id + "-admins-own"}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: in.id + "-admins-own"},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: in.id + "-admins-own"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: in.ns("a"), Name: "admins-own"}, StringData: map[string]string{"k": "v"}},
		}
		for _, o := range unrelated {
			Expect(kc.Client.Create(ctx, o)).To(Succeed())
		}
		velero := startVeleroCSI(ctx)

		By("scaling csv-cleaner to zero and uninstalling")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		in.uninstall(ctx)
		watch, stop := context.WithCancel(ctx)
		defer stop()
		o := watchOrder(watch, in, len(specs))

		By("scaling csv-cleaner up: the Backup completes and is verified before the first operand goes")
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		stop()
		verified, firstGone := o.times()
		Expect(verified).NotTo(BeZero())
		Expect(firstGone).NotTo(BeZero())
		Expect(firstGone.Before(verified)).To(BeFalse(), "the Backup was seen verified at %s, the first operand seen gone at %s", verified.Format(time.StampMilli), firstGone.Format(time.StampMilli))
		for key := range specs {
			ns, name, _ := strings.Cut(key, "/")
			Eventually(func(ctx context.Context) bool { return dependentsGone(ctx, ns, name) }).WithContext(ctx).Should(BeTrue(), "the garbage collector deletes the dependents of %s", key)
		}

		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).NotTo(BeNil())
		st := *rec.Status.Backup
		Expect(st).To(And(HaveField("Verified", true), HaveField("Phase", "Completed"), HaveField("Namespace", cluster.VeleroNamespace),
			HaveField("Dependents", BeEquivalentTo(6)), HaveField("Volumes", BeEquivalentTo(2))))
		// the two widgets, and OLM's cluster RBAC for the CSV
		Expect(st.Planned).To(BeNumerically(">=", int32(len(specs))))
		Expect(rec.Status.Message).To(ContainSubstring("csv-cleaner undo --namespace " + in.sub.Namespace + " " + in.csv))
		backup, err := velero.Backup(ctx, st.Name)
		Expect(err).NotTo(HaveOccurred())
		status, _, _ := unstructured.NestedMap(backup.Object, "status")
		AddReportEntry("Velero's Backup", fmt.Sprintf("%s: %s, %d items for %d planned deletions, %d dependents and %d volumes; csv-cleaner verified it at %s, the first operand went at %s; status %v",
			st.Name, st.Phase, st.Items, st.Planned, st.Dependents, st.Volumes, verified.Format(time.StampMilli), firstGone.Format(time.StampMilli), status))
		for _, o := range unrelated {
			Expect(kc.Client.Delete(ctx, o)).To(Succeed())
		}

		By("Velero's storage stopped: the undo says why, exits 1, restores nothing, and leaves no Undo behind")
		Expect(velero.StopStorage()).To(Succeed())
		storage := false
		DeferCleanup(func() {
			if !storage {
				Expect(velero.StartStorage()).To(Succeed())
			}
		})
		out, code := undo(ctx, "--namespace", in.sub.Namespace, in.csv)
		Expect(code).To(Equal(1), out)
		Expect(out).To(Or(MatchRegexp(`\(attempt 1\) ended (Failed|FailedValidation): `), ContainSubstring(`"Unavailable", not Available`)))
		Expect(undos(ctx, in.sub.Namespace, in.csv)).To(BeEmpty())
		failed := restores(ctx, st.Name)
		Expect(failed).To(BeNumerically("<=", 1))
		AddReportEntry("csv-cleaner undo with the storage just stopped", out)

		By("Velero reporting its location Unavailable: the undo names the location, its phase and what to do, and makes no Restore")
		Expect(velero.WaitLocation(ctx, "Unavailable")).To(Succeed())
		out, code = undo(ctx, "--namespace", in.sub.Namespace, in.csv)
		Expect(code).To(Equal(1), out)
		Expect(out).To(And(ContainSubstring("Velero's BackupStorageLocation "+cluster.VeleroNamespace+"/default"), ContainSubstring(`"Unavailable", not Available`),
			ContainSubstring("bring the storage back")))
		Expect(restores(ctx, st.Name)).To(Equal(failed))

		By("the storage back and Velero's location Available again: the same command, before the operator is installed again, makes the next attempt and brings everything back")
		Expect(velero.StartStorage()).To(Succeed())
		storage = true
		Expect(velero.WaitLocation(ctx, "Available")).To(Succeed())
		began := time.Now()
		out, code = undo(ctx, "--namespace", in.sub.Namespace, in.csv)
		AddReportEntry("csv-cleaner undo", fmt.Sprintf("exit %d in %s", code, time.Since(began).Round(time.Millisecond)))
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(ContainSubstring("8 restored, 0 present already, 0 missing"), ContainSubstring("from snapshot"), MatchRegexp(`Undo \S+: Completed`)))
		if failed > 0 {
			Expect(out).To(ContainSubstring(fmt.Sprintf("attempt %d", failed+1)), "the next attempt, never the failed one")
		}
		Expect(restores(ctx, st.Name)).To(Equal(failed + 1))
		made := undos(ctx, in.sub.Namespace, in.csv)
		Expect(made).To(ConsistOf(And(HaveField("Spec.Uninstall.Name", in.csv), HaveField("Status.Phase", cleanupv1alpha1.UndoCompleted),
			HaveField("Status.Restored", BeEquivalentTo(8)), HaveField("Status.Missing", BeZero()), HaveField("Status.OwnersLinked", BeEquivalentTo(6)))),
			"the Undo the CLI made, as kubectl get undos shows it")
		AddReportEntry("The Undo object", fmt.Sprintf("%s: %s, Backup %s, Restore %s (attempt %d): %d restored, %d present, %d missing, %d linked to their owners again",
			made[0].Name, made[0].Status.Phase, made[0].Status.Backup, made[0].Status.Restore, made[0].Status.Attempt, made[0].Status.Restored, made[0].Status.Present, made[0].Status.Missing, made[0].Status.OwnersLinked))
		for key, spec := range specs {
			ns, name, _ := strings.Cut(key, "/")
			u := fixtures.Operand(in.crd(), ns, name)
			Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed(), "Widget %s is back", key)
			Expect(u.Object["spec"]).To(Equal(spec), "Widget %s has its spec back", key)
			Expect(u.GetLabels()).To(HaveKeyWithValue("velero.io/backup-name", st.Name))
			got := dataOf(ctx, csi, ns, name)
			Expect(got.secret).To(Equal(held[key].secret), "the Secret of %s has its data back", key)
			Expect(got.config).To(Equal(held[key].config), "the ConfigMap of %s has its data back", key)
			Expect(got.volume).To(Equal(held[key].volume), "the volume of %s holds the same bytes (sha256 of each file)", key)
		}
		By("what the uninstall never touched stays gone")
		for _, o := range unrelated {
			Expect(apierrors.IsNotFound(kc.Client.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue(), "%s %s came back", fmt.Sprintf("%T", o), o.GetName())
		}

		By("installing the operator again, now that what came back is linked to its owners")
		Expect(kc.Resubscribe(ctx, in.sub)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, in.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())

		By("undoing again from here (--local), not through an Undo object: nothing is missing, nothing changes")
		n := restores(ctx, st.Name)
		out, code = undo(ctx, "--namespace", in.sub.Namespace, in.csv, "--local")
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(ContainSubstring("Undoing from here, not through an Undo object: --local"),
			ContainSubstring("nothing the uninstall destroyed is missing"), ContainSubstring("0 restored, 8 present already, 0 missing")))
		Expect(undos(ctx, in.sub.Namespace, in.csv)).To(HaveLen(1))
		Expect(restores(ctx, st.Name)).To(Equal(n))

		By("the restored Secrets, ConfigMaps and claims belonging to the restored widgets again, as they did")
		for key := range specs {
			ns, name, _ := strings.Cut(key, "/")
			u := fixtures.Operand(in.crd(), ns, name)
			Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
			secretKey, configKey, claimKey := dependentKeys(ns, name)
			for kind, k := range map[string]client.ObjectKey{"Secret": secretKey, "ConfigMap": configKey, "PersistentVolumeClaim": claimKey} {
				o := &metav1.PartialObjectMetadata{}
				o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
				Expect(kc.Client.Get(ctx, k, o)).To(Succeed())
				Expect(o.OwnerReferences).To(ConsistOf(And(HaveField("UID", u.GetUID()), HaveField("Kind", "Widget"),
					HaveField("Controller", HaveValue(BeTrue())), HaveField("BlockOwnerDeletion", HaveValue(BeTrue())))), "%s %s is the restored widget's again", kind, k)
			}
		}

		By("uninstalling the restored install: the second uninstall backs up and deletes exactly what the first did")
		in.uninstall(ctx)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		for key := range specs {
			ns, name, _ := strings.Cut(key, "/")
			Eventually(func(ctx context.Context) bool { return dependentsGone(ctx, ns, name) }).WithContext(ctx).Should(BeTrue(), "the garbage collector deletes the restored dependents of %s", key)
		}
		again, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Name", Not(Equal(st.Name))),
			HaveField("Planned", st.Planned), HaveField("Dependents", st.Dependents), HaveField("Volumes", st.Volumes))))
		AddReportEntry("The second uninstall", fmt.Sprintf("Backup %s: %d planned deletions, %d dependents, %d volumes (the first: %d, %d, %d)",
			again.Status.Backup.Name, again.Status.Backup.Planned, again.Status.Backup.Dependents, again.Status.Backup.Volumes, st.Planned, st.Dependents, st.Volumes))
		kept := csvvelero.Client{Live: kc.Client, Namespace: cluster.VeleroNamespace}
		first, err := kept.ReadDestroyed(ctx, st.Name)
		Expect(err).NotTo(HaveOccurred())
		second, err := kept.ReadDestroyed(ctx, again.Status.Backup.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(second.Deleted).To(ConsistOf(first.Deleted), "the same kinds and names deleted")
		Expect(second.Dependents).To(ConsistOf(first.Dependents), "the same dependents")
	})

	It("blocks, deleting nothing, while Velero's storage is down, and goes on by itself once it is back: no manual step", func(ctx SpecContext) {
		in := newInstall(backupDown)
		in.create(ctx, withVelero)
		in.widget(ctx, in.ns("a"), "w1")
		velero := startVelero(ctx)
		Expect(velero.StopStorage()).To(Succeed())
		storage := true
		DeferCleanup(func() {
			if storage {
				Expect(velero.StartStorage()).To(Succeed())
			}
		})

		in.uninstall(ctx)
		Eventually(func(ctx context.Context) string { return in.phase(ctx) }).WithContext(ctx).WithTimeout(3 * time.Minute).
			Should(BeElementOf("Blocked/"+cleanupv1alpha1.BlockedBackupFailed, "Blocked/"+cleanupv1alpha1.BlockedBackupUnavailable))
		blocked := in.phase(ctx)
		Consistently(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).WithTimeout(3 * time.Second).
			Should(ContainElements("CSV "+in.csvKey().String(), "Widget "+in.ns("a")+"/w1"))
		AddReportEntry("Blocked while the storage is down", in.describe(ctx))

		By("starting the storage again, and nothing else")
		Expect(velero.StartStorage()).To(Succeed())
		storage = false
		Eventually(func(ctx context.Context) error { _, err := in.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(4*time.Minute).
			Should(Satisfy(apierrors.IsNotFound), in.describe(ctx))
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Backup).To(HaveValue(HaveField("Verified", true)))
		By("every Backup made by csv-cleaner itself, one an attempt: each before the last failed, the last verified")
		made := ownerBackups(ctx, in)
		attempt := int(rec.Status.Backup.Attempt)
		Expect(made).To(HaveLen(attempt), "one Backup an attempt, none made by hand: %v", made)
		Expect(made).To(HaveKeyWithValue(rec.Status.Backup.Name, decide.BackupPhaseCompleted))
		for name, phase := range made {
			if name != rec.Status.Backup.Name {
				Expect(phase).To(BeElementOf(decide.BackupPhaseFailed, decide.BackupPhaseFailedValidation, decide.BackupPhasePartiallyFailed), "the attempt %s", name)
			}
		}
		if blocked == "Blocked/"+cleanupv1alpha1.BlockedBackupFailed {
			Expect(attempt).To(BeNumerically(">=", 2), "a Backup failed while the storage was down: csv-cleaner made the next one by itself")
		}
		AddReportEntry("After the storage came back", fmt.Sprintf("blocked %s; Backup %s (attempt %d) verified; csv-cleaner's Backups: %v", blocked, rec.Status.Backup.Name, attempt, made))
	})

	It("makes a new Backup by itself when the first could not hold the operator's operands because Velero did not know its CRD yet", func(ctx SpecContext) {
		By("starting Velero before the operator's CRD exists: it learns kinds at its start and every 5 minutes")
		velero := startVelero(ctx)
		in := newInstall(backupLate)
		in.create(ctx, withVelero)
		in.widget(ctx, in.ns("a"), "w1")
		in.uninstall(ctx)
		// With fine-grained filters, Velero v1.18.3 ends a Backup that names a
		// kind its discovery does not know PartiallyFailed; without them it
		// would end Completed, holding none of the kind (BackupIncomplete).
		Eventually(func(ctx context.Context) string { return in.phase(ctx) }).WithContext(ctx).
			Should(BeElementOf("Blocked/"+cleanupv1alpha1.BlockedBackupFailed, "Blocked/"+cleanupv1alpha1.BlockedBackupIncomplete))
		Consistently(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).WithTimeout(2 * time.Second).
			Should(ContainElements("CSV "+in.csvKey().String(), "Widget "+in.ns("a")+"/w1"))
		AddReportEntry("Blocked on the Backup Velero could not make whole", in.describe(ctx))

		By("Velero learning the kind (here by a restart of Velero, as its 5-minute refresh would), and csv-cleaner told nothing")
		Expect(velero.Restart(ctx)).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := in.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(4*time.Minute).
			Should(Satisfy(apierrors.IsNotFound), in.describe(ctx))
		in.waitCSVGone(ctx)
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Attempt", BeNumerically(">=", 2)))))
		AddReportEntry("After Velero learnt the kind", fmt.Sprintf("Backup %s (attempt %d) verified", rec.Status.Backup.Name, rec.Status.Backup.Attempt))
	})

	It("keeps, and names in the record, an operand of a namespace added to the OperatorGroup after the Backup was verified", func(ctx SpecContext) {
		in := newInstall(backupWiden)
		in.create(ctx, withVelero)
		Expect(client.IgnoreAlreadyExists(kc.Client.Create(ctx, fixtures.Namespace(in.ns("c"))))).To(Succeed())
		in.widget(ctx, in.ns("a"), "held", "e2e.csv-cleaner.io/hold")
		in.widget(ctx, in.ns("c"), "wc")
		startVelero(ctx)
		in.uninstall(ctx)
		Eventually(func(ctx context.Context) bool {
			rec, err := in.record(ctx)
			return err == nil && rec.Status.Backup != nil && rec.Status.Backup.Verified
		}).WithContext(ctx).Should(BeTrue(), in.describe(ctx))

		By("widening the OperatorGroup to a namespace that holds an operand, while another operand is still being finalized")
		og := &operatorsv1.OperatorGroup{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: in.sub.Namespace, Name: in.sub.OperatorGroup().Name}, og)).To(Succeed())
		og.Spec.TargetNamespaces = append(og.Spec.TargetNamespaces, in.ns("c"))
		Expect(kc.Client.Update(ctx, og)).To(Succeed())
		Eventually(func(ctx context.Context) []string {
			rec, err := in.record(ctx)
			if err != nil {
				return nil
			}
			var out []string
			for _, k := range rec.Status.Kept {
				out = append(out, k.Namespace+"/"+k.Name+"="+k.Reason)
			}
			return out
		}).WithContext(ctx).WithTimeout(2*time.Minute).Should(ContainElement(in.ns("c")+"/wc="+cleanupv1alpha1.KeepNotInBackup), in.describe(ctx))

		By("letting the held operand go: the uninstall completes, the operand no Backup holds is still there")
		held := fixtures.Operand(in.crd(), in.ns("a"), "held")
		Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
		held.SetFinalizers(nil)
		Expect(kc.Client.Update(ctx, held)).To(Succeed())
		in.waitCSVGone(ctx)
		Expect(in.remaining(ctx)).To(ContainElement("Widget " + in.ns("c") + "/wc"))
	})
})
