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
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	backupRoundTrip = samplePackage("backup-trip")
	backupDown      = samplePackage("backup-down")
)

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

// OLM's cluster objects of the old install: the reinstall made its own.
var olmClusterObjects = []string{
	"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
	"validatingwebhookconfigurations.admissionregistration.k8s.io", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
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
	BeforeEach(func() {
		if !kc.Local() {
			Skip("the harness runs its own Velero beside the local cluster")
		}
	})

	It("backs up and verifies what the uninstall deletes before the first operand goes; reinstalled, a restore brings every operand back with its spec", func(ctx SpecContext) {
		in := newInstall(backupRoundTrip)
		in.create(ctx, withVelero)
		specs := map[string]map[string]any{}
		for i, w := range [][2]string{{in.ns("a"), "w1"}, {in.ns("a"), "w2"}, {in.ns("b"), "w3"}} {
			u := fixtures.Operand(in.crd(), w[0], w[1])
			spec := map[string]any{"replicas": int64(i + 1), "storage": fmt.Sprintf("%dGi", 10*(i+1)), "version": "15." + w[1]}
			u.Object["spec"] = spec
			Expect(kc.Client.Create(ctx, u)).To(Succeed())
			in.lastOperand = u.GetCreationTimestamp()
			specs[w[0]+"/"+w[1]] = spec
		}
		velero := startVelero(ctx)

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

		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).NotTo(BeNil())
		st := *rec.Status.Backup
		Expect(st).To(And(HaveField("Verified", true), HaveField("Phase", "Completed"), HaveField("Namespace", cluster.VeleroNamespace)))
		// the three widgets, and OLM's cluster RBAC for the CSV
		Expect(st.Planned).To(BeNumerically(">=", int32(len(specs))))
		Expect(st.Items).To(BeNumerically(">=", st.Planned))
		Expect(rec.Status.Message).To(ContainSubstring("velero restore create --from-backup " + st.Name))
		backup, err := velero.Backup(ctx, st.Name)
		Expect(err).NotTo(HaveOccurred())
		started, _, _ := unstructured.NestedString(backup.Object, "status", "startTimestamp")
		completed, _, _ := unstructured.NestedString(backup.Object, "status", "completionTimestamp")
		AddReportEntry("Velero's Backup", fmt.Sprintf("%s: %s, %d items for %d planned deletions, started %s, completed %s; csv-cleaner verified it at %s, the first operand went at %s",
			st.Name, st.Phase, st.Items, st.Planned, started, completed, verified.Format(time.StampMilli), firstGone.Format(time.StampMilli)))

		By("reinstalling the operator, then restoring the Backup without OLM's old cluster objects")
		Expect(kc.Resubscribe(ctx, in.sub)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, in.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		began := time.Now()
		phase, err := velero.Restore(ctx, st.Name, olmClusterObjects...)
		Expect(err).NotTo(HaveOccurred())
		Expect(phase).To(Equal("Completed"))
		AddReportEntry("Velero's Restore", fmt.Sprintf("of %s: %s in %s", st.Name, phase, time.Since(began).Round(time.Millisecond)))
		for key, spec := range specs {
			ns, name, _ := strings.Cut(key, "/")
			u := fixtures.Operand(in.crd(), ns, name)
			Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed(), "Widget %s is back", key)
			Expect(u.Object["spec"]).To(Equal(spec), "Widget %s has its spec back", key)
			Expect(u.GetLabels()).To(HaveKeyWithValue("velero.io/backup-name", st.Name))
		}
	})

	It("blocks, deleting nothing, while Velero's storage is down; goes on once it is back and the failed Backup is deleted", func(ctx SpecContext) {
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
		Consistently(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).WithTimeout(3 * time.Second).
			Should(ContainElements("CSV "+in.csvKey().String(), "Widget "+in.ns("a")+"/w1"))

		By("starting the storage again and deleting the failed Backup, as the record says")
		Expect(velero.StartStorage()).To(Succeed())
		storage = false
		Expect(velero.WaitLocation(ctx, "Available")).To(Succeed())
		rec, err := in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		if b := rec.Status.Backup; b != nil && b.Name != "" {
			backup, err := velero.Backup(ctx, b.Name)
			if err == nil {
				Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, backup))).To(Succeed())
			}
		}
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name()), in.describe(ctx))
		rec, err = in.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Backup).To(HaveValue(HaveField("Verified", true)))
	})
})
