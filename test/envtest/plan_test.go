package envtest_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
)

var _ = Describe("csv-cleaner plan", func() {
	It("prints what an uninstall would delete and keep, and why, as a table or JSON, and changes nothing", func(ctx SpecContext) {
		s := newScenario("plan")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.installWithOperand(ctx) // a-plan/w1 and plan-role
		s.operand(ctx, 0, s.ns("b"), "w2", "example.com/hold")
		s.operand(ctx, 0, s.ns("c"), "w3") // outside the targets
		s.clusterRole(ctx, "unrelated", map[string]string{"olm.owner": s.install.CSVName})
		kind := s.crd(0).Kind + "." + s.crd(0).Group
		const words = "Delete every Widget before the operator: their volumes stay."
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		base := csv.DeepCopy()
		metav1.SetMetaDataAnnotation(&csv.ObjectMeta, "operator.openshift.io/uninstall-message", words)
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())

		By("stopping csv-cleaner, so that any change to the cluster would be the plan's")
		stopManager()
		before := resourceVersions(ctx, s)

		bin := planBinary()
		s.afterOperands() // a deletion planned for now falls in a later second than the operands
		sa := planIdentity(ctx, s.id, s.crd(0).Group)
		run := func(args ...string) string {
			GinkgoHelper()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, append([]string{"plan", "--kubeconfig", cp.Kubeconfig, "--service-account", sa.String()}, args...)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			Expect(cmd.Run()).To(Succeed(), stderr.String())
			return stdout.String()
		}

		By("reading the plan as JSON")
		var dry dryrun.DryRun
		Expect(json.Unmarshal([]byte(run("--namespace", s.install.Namespace, s.install.CSVName, "-o", "json")), &dry)).To(Succeed())
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall))
		Expect(dry.Refusals).To(BeEmpty(), "the identity may do what the uninstall does, and no admission check refuses it")
		Expect(dry.Notes).To(BeEmpty())
		Expect(dry.Policy).To(Equal("plan"))
		Expect(dry.UninstallMessage).To(Equal(words), "the operator author's words, as the console shows them")
		Expect(dry.Items).To(ConsistOf(
			dryrun.DryRunItem{Action: "Delete", Kind: kind, Namespace: s.ns("a"), Name: "w1", Reason: decide.DeleteOwnedOperand},
			dryrun.DryRunItem{Action: "Delete", Kind: kind, Namespace: s.ns("b"), Name: "w2", Reason: decide.DeleteOwnedOperand},
			dryrun.DryRunItem{Action: "Keep", Kind: kind, Namespace: s.ns("c"), Name: "w3", Reason: cleanupv1alpha1.KeepOutsideTargets},
			dryrun.DryRunItem{Action: "Delete", Kind: "ClusterRoleBinding.rbac.authorization.k8s.io", Name: "plan-role", Reason: decide.DeleteOwnerLabels},
			dryrun.DryRunItem{Action: "Delete", Kind: "ClusterRole.rbac.authorization.k8s.io", Name: "plan-role", Reason: decide.DeleteOwnerLabels},
			dryrun.DryRunItem{Action: "Keep", Kind: "CustomResourceDefinition.apiextensions.k8s.io", Name: s.crd(0).Name(), Reason: cleanupv1alpha1.KeepHasInstances},
		), "the ClusterRole with olm.owner alone is not the CSV's")

		By("reading the same plan as a table, with the CSV name before the flags")
		table := run(s.install.CSVName, "-n", s.install.Namespace)
		Expect(table).To(MatchRegexp(`Verdict:\s+Uninstall: the CSV is not being deleted; deleting it now would uninstall the operator`))
		Expect(table).To(MatchRegexp(`(?m)^ACTION\s+KIND\s+NAMESPACE\s+NAME\s+REASON$`))
		Expect(table).To(MatchRegexp(`(?m)^Keep\s+Widget\.plan\.example\.com\s+c-plan\s+w3\s+OutsideTargets$`))
		Expect(table).To(MatchRegexp(`(?m)^Delete\s+ClusterRole\.rbac\.authorization\.k8s\.io\s+-\s+plan-role\s+OwnerLabels$`))
		Expect(table).To(ContainSubstring("4 to delete, 2 to keep"))
		Expect(table).To(MatchRegexp(`(?m)^Uninstall message:\s+` + words + `$`))
		GinkgoWriter.Println(table)

		By("finding every object as it was: no write, no CSVCleanup record")
		Expect(resourceVersions(ctx, s)).To(Equal(before))
		Expect(k8s.Get(ctx, s.install.Key(), &cleanupv1alpha1.CSVCleanup{})).To(MatchError(ContainSubstring("not found")))

		By("planning a CSV that is being deleted, while csv-cleaner is stopped: what was created after the deletion is kept")
		s.deleteCSV(ctx)
		time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
		s.operand(ctx, 0, s.ns("a"), "late")
		Expect(json.Unmarshal([]byte(run("-n", s.install.Namespace, s.install.CSVName, "-o", "json")), &dry)).To(Succeed())
		Expect(dry.Message).To(Equal("CSV is being uninstalled"))
		Expect(dry.Items).To(ContainElement(dryrun.DryRunItem{Action: "Keep", Kind: kind, Namespace: s.ns("a"), Name: "late", Reason: cleanupv1alpha1.KeepCreatedAfterDeletion}))

		Expect(s.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer), "the plan released nothing")

		By("letting csv-cleaner finish the uninstall the plan described")
		startManager()
		Eventually(func(g Gomega, ctx SpecContext) {
			w2 := &unstructured.Unstructured{}
			w2.SetGroupVersionKind(s.crd(0).GVK())
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.ns("b"), Name: "w2"}, w2)).To(Succeed())
			w2.SetFinalizers(nil)
			g.Expect(k8s.Update(ctx, w2)).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
		s.csvGone(ctx)
		Expect(s.record(ctx).Status.UninstallMessage).To(Equal(words), "the record keeps the operator author's words")
		Expect(s.remaining(ctx)).To(ConsistOf(
			"CRD "+s.crd(0).Name(),
			"Widget "+s.ns("c")+"/w3",
			"Widget "+s.ns("a")+"/late",
			"ClusterRole plan-unrelated",
		))
	})

	It("follows the run when operands are orphaned and an owned CRD name is malformed: the operands kept, the RBAC deleted, not Blocked", func(ctx SpecContext) {
		s := newScenario("plan-orphan")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.Operands = cleanupv1alpha1.Orphan })
		csv := s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		addOwned(ctx, csv, "NotA_CRD", "Bad")
		kind := s.crd(0).Kind + "." + s.crd(0).Group

		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Items).To(ConsistOf(
			dryrun.DryRunItem{Action: "Keep", Kind: kind, Namespace: s.ns("a"), Name: "w1", Reason: cleanupv1alpha1.KeepPolicyOrphan},
			dryrun.DryRunItem{Action: "Delete", Kind: "ClusterRoleBinding.rbac.authorization.k8s.io", Name: "plan-orphan-role", Reason: decide.DeleteOwnerLabels},
			dryrun.DryRunItem{Action: "Delete", Kind: "ClusterRole.rbac.authorization.k8s.io", Name: "plan-orphan-role", Reason: decide.DeleteOwnerLabels},
			dryrun.DryRunItem{Action: "Keep", Kind: "CustomResourceDefinition.apiextensions.k8s.io", Name: s.crd(0).Name(), Reason: cleanupv1alpha1.KeepPolicyOrphan},
		))

		By("uninstalling: the run does what the plan said")
		s.uninstall(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w1"))
	})

	It("says that a CSV no policy selects would have nothing deleted", func(ctx SpecContext) {
		s := newScenario("planone")
		s.create(ctx)
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dry.Verdict).To(Equal(decide.VerdictUnmanaged))
		Expect(dry.Items).To(BeEmpty())
	})
})

// resourceVersions maps every object of the scenario the plan reads to its resourceVersion.
func resourceVersions(ctx SpecContext, s *scenario) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	csv, err := s.getCSV(ctx)
	Expect(err).NotTo(HaveOccurred())
	out["csv"] = csv.ResourceVersion
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(s.crd(0).GVK().GroupVersion().WithKind(s.crd(0).Kind + "List"))
	Expect(k8s.List(ctx, list)).To(Succeed())
	for _, o := range list.Items {
		out[o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	for _, kind := range []string{"ClusterRoleList", "ClusterRoleBindingList"} {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind(kind))
		Expect(k8s.List(ctx, l, client.MatchingLabels{"olm.owner": s.install.CSVName})).To(Succeed())
		for _, o := range l.Items {
			out[kind+"/"+o.Name] = o.ResourceVersion
		}
	}
	return out
}
