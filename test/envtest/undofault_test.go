package envtest_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// lockedBuffer is a bytes.Buffer written by a process and read by the spec.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// backgroundCLI is the csv-cleaner binary run in the background.
type backgroundCLI struct {
	stdout, stderr lockedBuffer
	done           chan int
}

// startCLI runs the csv-cleaner binary with args in the background, as
// runCLI does.
func startCLI(ctx context.Context, args ...string) *backgroundCLI {
	GinkgoHelper()
	b := &backgroundCLI{done: make(chan int, 1)}
	cmd := exec.CommandContext(ctx, planBinary(), append(args, "--kubeconfig", cp.Kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &b.stdout, &b.stderr
	Expect(cmd.Start()).To(Succeed())
	go func() {
		var exit *exec.ExitError
		switch err := cmd.Wait(); {
		case errors.As(err, &exit):
			b.done <- exit.ExitCode()
		case err != nil:
			b.done <- -1
		default:
			b.done <- 0
		}
	}()
	return b
}

// wait waits for the process to exit and returns its exit code.
func (b *backgroundCLI) wait(ctx context.Context) int {
	GinkgoHelper()
	select {
	case code := <-b.done:
		return code
	case <-ctx.Done():
		Fail("csv-cleaner did not exit: " + b.stderr.String())
	}
	return -1
}

// undosOf are the Undos of the scenario's uninstall.
func undosOf(ctx context.Context, s *scenario) []cleanupv1alpha1.Undo {
	GinkgoHelper()
	list := &cleanupv1alpha1.UndoList{}
	Expect(k8s.List(ctx, list)).To(Succeed())
	var out []cleanupv1alpha1.Undo
	for _, u := range list.Items {
		if u.Spec.Uninstall.Namespace == s.install.Namespace && u.Spec.Uninstall.Name == s.install.CSVName {
			out = append(out, u)
		}
	}
	return out
}

// restoresOf are Velero's Restores in namespace, by name, with their
// Backup and phase ("backup phase").
func restoresOf(ctx context.Context, namespace string) map[string]string {
	GinkgoHelper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(restoreGVK.GroupVersion().WithKind("RestoreList"))
	Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]string{}
	for _, r := range list.Items {
		backup, _, _ := unstructured.NestedString(r.Object, "spec", "backupName")
		phase, _, _ := unstructured.NestedString(r.Object, "status", "phase")
		out[r.GetName()] = backup + " " + phase
	}
	return out
}

// undoneWidget installs the scenario with one operand, a-<id>/w1 (labels
// on it), owning a ConfigMap, uninstalls it under a backup to Velero in
// veleroNamespace and waits until the garbage collector took the
// ConfigMap: what an undo then brings back.
func undoneWidget(ctx context.Context, s *scenario, veleroNamespace string, labels map[string]string) (*unstructured.Unstructured, client.Object) {
	GinkgoHelper()
	s.create(ctx)
	w1 := fixtures.Operand(s.crd(0), s.ns("a"), "w1")
	w1.SetLabels(labels)
	Expect(k8s.Create(ctx, w1)).To(Succeed())
	s.lastOperand = w1.GetCreationTimestamp()
	s.ownedRBAC(ctx, "role")
	s.waitFinalizer(ctx)
	cm := configMap(ctx, s.ns("a"), "w1-config", w1)
	s.uninstall(ctx)
	Eventually(func(ctx context.Context) bool { return present(ctx, cm) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(BeFalse())
	Expect(s.record(ctx).Status.Backup).To(HaveValue(HaveField("Verified", true)), "uninstalled under a verified Backup in %s", veleroNamespace)
	return w1, cm
}

// undoFaultSpecs are the undo's specs on a bad day (docs/backup.md, "When a
// Restore fails"): they run in the backup gate's ordered container.
func undoFaultSpecs() {
	It("after a Restore that failed, makes a new attempt when run again, never following the failed one; while Velero's storage is down it says so and exits 1, leaving no Undo behind", func(ctx SpecContext) {
		s := newScenario("undofail")
		s.createPolicy(ctx, backupTo("velero-undofail"))
		v := startFakeVelero(ctx, "velero-undofail", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undofail", nil)
		args := []string{"undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undofail"}

		By("Velero's storage location Unavailable: no Restore is made; the undo names the location, its phase and what to do, exits 1, and its Undo is gone")
		v.setLocation(ctx, "Unavailable")
		out, errOut, code := runCLIAll(ctx, args...)
		Expect(code).To(Equal(1), out+errOut)
		Expect(errOut).To(And(ContainSubstring("Velero's BackupStorageLocation velero-undofail/default"), ContainSubstring(`is "Unavailable", not Available`),
			ContainSubstring("bring the storage back")))
		Expect(restoresOf(ctx, "velero-undofail")).To(BeEmpty())
		Expect(undosOf(ctx, s)).To(BeEmpty(), "the Undo the command made is deleted: nothing goes on behind its back")

		By("the location Available, but Velero failing the Restore it is given: exit 1 with Velero's reason and what to do")
		v.setLocation(ctx, "Available")
		v.failRestores("error downloading backup: storage unreachable")
		out, errOut, code = runCLIAll(ctx, args...)
		Expect(code).To(Equal(1), out+errOut)
		Expect(errOut).To(And(ContainSubstring("(attempt 1) ended Failed: restore execution failed: error downloading backup: storage unreachable"),
			ContainSubstring("run the undo again: it makes a new attempt")))
		Expect(restoresOf(ctx, "velero-undofail")).To(HaveLen(1))
		Expect(present(ctx, w1)).To(BeFalse())

		By("Velero mended, the same command run again: a second Restore, attempt 2, not the failed one; everything back and linked, exit 0")
		v.endRestoresIn("Completed")
		out, errOut, code = runCLIAll(ctx, args...)
		Expect(code).To(BeZero(), errOut)
		Expect(out).To(And(MatchRegexp(`Restore:\s+\S+-undo-[0-9a-f]{8}-2 \(Completed, attempt 2\)`), ContainSubstring("2 restored, 0 present already, 0 missing")))
		Expect(errOut).To(ContainSubstring("the operator may run again now"))
		Expect(restoresOf(ctx, "velero-undofail")).To(And(HaveLen(2), ContainElements(HaveSuffix(" Failed"), HaveSuffix(" Completed"))))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
	})

	It("an Undo whose Restore Velero refused (its storage went down as it was made) makes the next attempt by itself once Velero reports the location Available", func(ctx SpecContext) {
		s := newScenario("undoretry")
		s.createPolicy(ctx, backupTo("velero-undoretry"))
		v := startFakeVelero(ctx, "velero-undoretry", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undoretry", nil)

		By("the storage going down as the Restore is made: Velero ends it FailedValidation")
		v.locationDownOnRestore()
		u := s.undoOf("undoretry", "velero-undoretry")
		createUndo(ctx, u)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).Should(Equal("Blocked/" + cleanupv1alpha1.UndoReasonRestoreFailed))
		st := undoStatus(ctx, u.Name)
		Expect(st).To(And(HaveField("Attempt", BeEquivalentTo(1)), HaveField("RestorePhase", velero.RestoreFailedValidate)))
		Expect(completeCondition(st).Message).To(And(ContainSubstring("ended FailedValidation: The BSL default is unavailable, cannot retrieve the backup"),
			ContainSubstring("The Undo makes attempt 2 at")))

		By("past the retry time, the location still Unavailable: no second Restore, and the Undo says why")
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal("Blocked/" + cleanupv1alpha1.UndoReasonStorageUnavailable))
		Expect(completeCondition(undoStatus(ctx, u.Name)).Message).To(And(ContainSubstring(`is "Unavailable", not Available`), ContainSubstring("(attempt 2, after attempt 1, ")))
		Expect(restoresOf(ctx, "velero-undoretry")).To(HaveLen(1))

		By("Velero reporting the location Available again, and nobody doing anything else: attempt 2, everything back")
		v.setLocation(ctx, "Available")
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		Expect(undoStatus(ctx, u.Name)).To(And(HaveField("Attempt", BeEquivalentTo(2)), HaveField("Restored", BeEquivalentTo(2)), HaveField("Missing", BeZero())))
		Expect(restoresOf(ctx, "velero-undoretry")).To(HaveLen(2))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
		undoEvents(ctx, u.Name, "UndoBlocked", "UndoInProgress", "UndoCompleted")
	})

	It("run again with --selector or --only, follows the Undo in flight; two Undos of one uninstall make one Restore", func(ctx SpecContext) {
		s := newScenario("undotwice")
		s.createPolicy(ctx, backupTo("velero-undotwice"))
		v := startFakeVelero(ctx, "velero-undotwice", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undotwice", map[string]string{"tier": "db"})
		v.endRestoresIn("") // Velero holds every Restore in progress
		args := []string{"undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undotwice", "--selector", "tier=db", "--only", "Widget/" + s.ns("a") + "/w1"}

		By("a first run, and a second while its Restore is in progress: the second follows the first one's Undo")
		first := startCLI(ctx, args...)
		Eventually(func(ctx context.Context) []cleanupv1alpha1.Undo { return undosOf(ctx, s) }).WithContext(ctx).
			Should(ConsistOf(HaveField("Status.Phase", cleanupv1alpha1.UndoInProgress)), first.stderr.String())
		second := startCLI(ctx, args...)
		Eventually(second.stderr.String).WithContext(ctx).Should(MatchRegexp(`Undo \S+ of the same uninstall is under way: following it`))
		Expect(undosOf(ctx, s)).To(HaveLen(1))

		By("another Undo of the same uninstall, all of it: it follows the Restore under way rather than make a second")
		all := s.undoOf("undotwice-all", "velero-undotwice")
		createUndo(ctx, all)
		Eventually(func(ctx context.Context) string { return undoStatus(ctx, all.Name).Restore }).WithContext(ctx).ShouldNot(BeEmpty())
		Expect(undoStatus(ctx, all.Name).Restore).To(Equal(undosOf(ctx, s)[0].Status.Restore))
		Consistently(func(ctx context.Context) map[string]string { return restoresOf(ctx, "velero-undotwice") }).WithContext(ctx).WithTimeout(2 * time.Second).Should(HaveLen(1))

		By("Velero ending the Restore: both runs and the Undo complete on it")
		v.endRestoresIn("Completed")
		Expect(first.wait(ctx)).To(BeZero(), first.stderr.String())
		Expect(second.wait(ctx)).To(BeZero(), second.stderr.String())
		Expect(first.stdout.String()).To(ContainSubstring("2 restored, 0 present already, 0 missing"))
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, all.Name) }).WithContext(ctx).Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		Expect(restoresOf(ctx, "velero-undotwice")).To(HaveLen(1))
		Expect(undosOf(ctx, s)).To(HaveLen(2))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
	})

	It("with no csv-cleaner answering its Undo within 10 s, undoes from here, says so, and leaves no Undo behind", func(ctx SpecContext) {
		s := newScenario("undolocal")
		s.createPolicy(ctx, backupTo("velero-undolocal"))
		startFakeVelero(ctx, "velero-undolocal", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undolocal", nil)
		scaleToZero()
		out, errOut, code := runCLIAll(ctx, "undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undolocal")
		Expect(code).To(BeZero(), errOut)
		Expect(errOut).To(MatchRegexp(`Undoing from here, not through an Undo object: no csv-cleaner in the cluster answered Undo \S+ in 10s`))
		Expect(out).To(ContainSubstring("2 restored, 0 present already, 0 missing"))
		Expect(undosOf(ctx, s)).To(BeEmpty(), "the Undo nobody answered is deleted")
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
	})

	It("as csv-cleaner's ServiceAccount: an Undo retries, naming manifests/velero, while it may not read Velero's objects or list a kind it restores; without undo.yaml's rights its rows say the owners were not written and which right is missing; with them, the next undo links", func(ctx SpecContext) {
		s := newScenario("undorights")
		s.install.OLMAdminRoles = true // the operand role's rights on the widgets, as OLM makes them
		s.createPolicy(ctx, backupTo("velero-undorights"))
		startFakeVelero(ctx, "velero-undorights", "Available")
		w1, cm := undoneWidget(ctx, s, "velero-undorights", nil)

		By("csv-cleaner with the bundle's rights alone: the Undo is Retrying, saying where the rights come from; nothing restored")
		runShipped(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, s.crd(0).Group, s.crd(0).Plural)).To(Succeed())
		u := s.undoOf("undorights", "velero-undorights")
		createUndo(ctx, u)
		// The bounds below are generous: the manager restarted as the
		// ServiceAccount, kube-controller-manager's aggregation and the
		// controller's capped backoff (10 s) all wait on a loaded CI machine.
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(time.Minute).Should(HaveSuffix("/" + cleanupv1alpha1.UndoReasonRetrying))
		Expect(completeCondition(undoStatus(ctx, u.Name)).Message).To(And(ContainSubstring("forbidden"), ContainSubstring(`manifests/velero: docs/backup.md, "Rights"`)))
		Expect(restoresOf(ctx, "velero-undorights")).To(BeEmpty())

		By("manifests/velero's Role, not yet dependents.yaml: the Undo still retries, saying it may not list ConfigMaps; nothing restored")
		applyVeleroRoleOnly(ctx, "velero-undorights")
		Eventually(func(ctx context.Context) string { return completeCondition(undoStatus(ctx, u.Name)).Message }).WithContext(ctx).WithTimeout(time.Minute).
			Should(And(ContainSubstring("nothing is restored while the undo cannot tell what of a kind is missing"), ContainSubstring("listing configmaps")))
		Expect(undoPhase(ctx, u.Name)).To(HaveSuffix("/" + cleanupv1alpha1.UndoReasonRetrying))
		Expect(restoresOf(ctx, "velero-undorights")).To(BeEmpty())

		By("and the dependents' roles, not undo.yaml: the Undo goes on by itself; the ConfigMap comes back, its row says its owner was not written and why")
		applyDependentsRoles(ctx)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, u.Name) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		Expect(undoStatus(ctx, u.Name)).To(And(HaveField("Restored", BeEquivalentTo(2)), HaveField("OwnersLinked", BeZero()),
			HaveField("NotBack", ConsistOf(And(HaveField("Name", "w1-config"), HaveField("OwnersLeftOut", ConsistOf(ContainSubstring("not written, this identity may not patch configmaps"))))))))
		Expect(ownersOf(ctx, cm)).To(BeEmpty())

		By("undo.yaml applied: an undo run again writes the owners it could not, restoring nothing")
		applyUndoRights(ctx)
		again := s.undoOf("undorights-again", "velero-undorights")
		createUndo(ctx, again)
		Eventually(func(ctx context.Context) string { return undoPhase(ctx, again.Name) }).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("Completed/" + cleanupv1alpha1.UndoReasonCompleted))
		Expect(undoStatus(ctx, again.Name)).To(And(HaveField("Present", BeEquivalentTo(2)), HaveField("OwnersLinked", BeEquivalentTo(1)), HaveField("NotBack", BeEmpty())))
		Expect(ownersOf(ctx, cm)).To(ConsistOf(HaveField("UID", BeEquivalentTo(uidOf(ctx, w1)))))
		Expect(restoresOf(ctx, "velero-undorights")).To(HaveLen(1))
	})

	It("finds, its record gone, the newest of the uninstall's verified Backups: not an older verified one, nor a newer one that failed", func(ctx SpecContext) {
		s := newScenario("undonewest")
		s.createPolicy(ctx, backupTo("velero-undonewest"))
		startFakeVelero(ctx, "velero-undonewest", "Available")
		undoneWidget(ctx, s, "velero-undonewest", nil)
		older := s.record(ctx).Status.Backup.Name
		v := velero.Client{Live: k8s, Writer: k8s, Namespace: "velero-undonewest"}
		kept, err := v.ReadDestroyed(ctx, older)
		Expect(err).NotTo(HaveOccurred())

		By("two more Backups of the same owner, as later uninstalls of a CSV of that name make them: a newer verified one, and a newest one that failed")
		made := func(name, phase string) {
			GinkgoHelper()
			b := &unstructured.Unstructured{}
			b.SetGroupVersionKind(backupGVK)
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: older}, b)).To(Succeed())
			fixtures.WaitNextSecond(b.GetCreationTimestamp().Add(time.Second)) // ordered by creation, to the second
			copied := &unstructured.Unstructured{Object: map[string]any{"spec": b.Object["spec"], "status": map[string]any{"phase": phase}}}
			copied.SetGroupVersionKind(backupGVK)
			copied.SetNamespace(v.Namespace)
			copied.SetName(name)
			copied.SetLabels(b.GetLabels())
			Expect(k8s.Create(ctx, copied)).To(Succeed())
			read, err := v.Backup(ctx, name)
			Expect(err).NotTo(HaveOccurred())
			record := *kept
			record.Backup = name
			Expect(v.KeepDestroyed(ctx, read, decide.Owner{Kind: decide.KindCSV, Namespace: s.install.Namespace, Name: s.install.CSVName}, &record)).To(Succeed())
		}
		made(older+"-newer", decide.BackupPhaseCompleted)
		made(older+"-newest", decide.BackupPhaseFailed)

		By("the record gone, with its namespace, say")
		Expect(k8s.Delete(ctx, s.record(ctx))).To(Succeed())
		out, code := runCLI(ctx, "undo", "-n", s.install.Namespace, s.install.CSVName, "--velero-namespace", "velero-undonewest")
		Expect(code).To(Equal(4), "the test's Velero holds no copy of what a Backup made by hand holds: nothing comes back")
		Expect(out).To(MatchRegexp(`Backup:\s+velero-undonewest/` + older + `-newer \(found from its labels`))
		Expect(restoresOf(ctx, "velero-undonewest")).To(ConsistOf(HavePrefix(older + "-newer ")))
	})

	It("gives Velero the policy's ttl, storageLocation and snapshotVolumes; a location that does not exist blocks, saying so", func(ctx SpecContext) {
		s := newScenario("bksettings")
		ttl := metav1.Duration{Duration: 72 * time.Hour}
		snapshot := false
		s.createPolicy(ctx, backupTo("velero-settings"), func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.Backup.Velero.StorageLocation, p.Backup.Velero.TTL, p.Backup.Velero.SnapshotVolumes = "secondary", &ttl, &snapshot
		})
		v := startFakeVelero(ctx, "velero-settings", "Available")
		s.installWithOperand(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedBackupUnavailable)
		Expect(s.record(ctx).Status.Message).To(And(ContainSubstring("Velero has no BackupStorageLocation secondary in namespace velero-settings"),
			ContainSubstring("backup.velero.storageLocation")))
		Consistently(func(ctx context.Context) []unstructured.Unstructured { return v.backups(ctx) }).WithContext(ctx).WithTimeout(time.Second).Should(BeEmpty())

		By("creating the location, as an admin would: the Backup is made there, with the policy's settings")
		v.addLocation(ctx, "secondary", "Available")
		s.csvGone(ctx)
		backups := v.backups(ctx)
		Expect(backups).To(HaveLen(1))
		Expect(backups[0].Object["spec"]).To(And(HaveKeyWithValue("storageLocation", "secondary"), HaveKeyWithValue("ttl", "72h0m0s"),
			HaveKeyWithValue("snapshotVolumes", false)))
	})
}

// completeCondition is the Complete condition of an Undo's status.
func completeCondition(st cleanupv1alpha1.UndoStatus) metav1.Condition {
	GinkgoHelper()
	for _, c := range st.Conditions {
		if c.Type == cleanupv1alpha1.UndoConditionComplete {
			return c
		}
	}
	Fail("no Complete condition")
	return metav1.Condition{}
}
