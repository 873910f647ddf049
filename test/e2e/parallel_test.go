//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var backupParallel = samplePackage("backup-par")

// parallelWidgets is how many widgets, each owning a Secret, a ConfigMap
// and a claim with known bytes, the parallel Backup holds.
const parallelWidgets = 60

var _ = Describe("An undoable uninstall, with Velero's parallel item-block workers", func() {
	BeforeEach(skipUnlessLocalVelero)

	It("backs up 60 widgets' claims at 8 workers with its first Backup, Velero never dying, and the undo brings back every byte and owner", func(ctx SpecContext) {
		in := newInstall(backupParallel)
		in.create(ctx, withVelero)
		csi := startCSI(ctx)
		gcWatches(ctx, in.crd(), in.ns("a"))
		held := map[string]data{}
		for i := range parallelWidgets {
			ns := in.ns([]string{"a", "b"}[i%2])
			name := fmt.Sprintf("db%02d", i)
			u := fixtures.Operand(in.crd(), ns, name)
			Expect(kc.Client.Create(ctx, u)).To(Succeed())
			in.lastOperand = u.GetCreationTimestamp()
			held[ns+"/"+name] = withDependents(ctx, csi, u)
		}
		velero := startVeleroCSI(ctx)
		Expect(velero.Workers()).To(BeNumerically(">=", 8), "the harness's Velero runs %s=%d workers; this spec wants 8 at least", cluster.VeleroWorkersEnv, velero.Workers())

		By("uninstalling: the first Backup completes, is verified, and everything goes")
		began := time.Now()
		in.uninstall(ctx)
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).WithTimeout(5*time.Minute).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		took := time.Since(began)
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Phase", "Completed"), HaveField("Attempt", BeNumerically("<=", 1)),
			HaveField("Volumes", BeEquivalentTo(parallelWidgets)), HaveField("Dependents", BeEquivalentTo(3*parallelWidgets)), HaveField("LastFailure", BeEmpty()))),
			"the first attempt is verified: %s", rec.Status.Message)
		st := *rec.Status.Backup
		Expect(ownerBackups(ctx, in)).To(Equal(map[string]string{st.Name: "Completed"}), "one Backup, the first attempt")
		backup, err := velero.Backup(ctx, st.Name)
		Expect(err).NotTo(HaveOccurred())
		status, _, _ := unstructured.NestedMap(backup.Object, "status")
		Expect(status).To(And(HaveKeyWithValue("csiVolumeSnapshotsAttempted", BeEquivalentTo(parallelWidgets)), HaveKeyWithValue("csiVolumeSnapshotsCompleted", BeEquivalentTo(parallelWidgets))))
		Expect(velero.Healthy()).To(Succeed(), "Velero's server never restarts and its log shows no fatal error")
		AddReportEntry("The parallel Backup", fmt.Sprintf("%d workers: uninstall of %d widgets with %d claims in %s; Backup %s %s, %d items; Velero's status %v",
			velero.Workers(), parallelWidgets, parallelWidgets, took.Round(time.Millisecond), st.Name, st.Phase, st.Items, status))
		for key := range held {
			ns, name, _ := strings.Cut(key, "/")
			Eventually(func(ctx context.Context) bool { return dependentsGone(ctx, ns, name) }).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeTrue(), "the garbage collector deletes the dependents of %s", key)
		}

		By("undoing before the reinstall: every byte back, every dependent its restored widget's again")
		began = time.Now()
		out, code := undo(ctx, "--namespace", in.sub.Namespace, in.csv)
		AddReportEntry("csv-cleaner undo of 60 claims", fmt.Sprintf("exit %d in %s", code, time.Since(began).Round(time.Millisecond)))
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring(fmt.Sprintf("%d restored, 0 present already, 0 missing", 4*parallelWidgets)))
		for key, want := range held {
			ns, name, _ := strings.Cut(key, "/")
			u := fixtures.Operand(in.crd(), ns, name)
			Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed(), "Widget %s is back", key)
			got := dataOf(ctx, csi, ns, name)
			Expect(got.secret).To(Equal(want.secret), "the Secret of %s has its data back", key)
			Expect(got.volume).To(Equal(want.volume), "the volume of %s holds the same bytes (sha256 of each file)", key)
			secretKey, configKey, claimKey := dependentKeys(ns, name)
			for kind, k := range map[string]client.ObjectKey{"Secret": secretKey, "ConfigMap": configKey, "PersistentVolumeClaim": claimKey} {
				o := &metav1.PartialObjectMetadata{}
				o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
				Expect(kc.Client.Get(ctx, k, o)).To(Succeed())
				Expect(o.OwnerReferences).To(ConsistOf(HaveField("UID", u.GetUID())), "%s %s is the restored widget's again", kind, k)
				Expect(o.Annotations).NotTo(HaveKey(decide.VeleroMustIncludeAnnotation),
					"%s %s does not keep the annotation Velero's Restore leaves on a claim, with which its next Backup would take the claim's volume", kind, k)
			}
		}
		Expect(velero.Healthy()).To(Succeed(), "Velero's server never restarts and its log shows no fatal error")
	})
})
