package envtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// The state of an operator upgraded across a storage version and then
// removed (opentelemetry-operator after the 0.9x bundles, loki): the
// instances are stored at an older version than the API server serves them
// at, behind a conversion webhook nobody serves any more.
var _ = Describe("csv-cleaner plan on kinds it cannot read at the version it lists", func() {
	// planAsRun plans the CSV as `csv-cleaner plan` does, the rights checked
	// for an identity that holds them.
	planAsRun := func(ctx context.Context, s *scenario) *dryrun.DryRun {
		GinkgoHelper()
		s.afterOperands() // a deletion planned for now is in a later second than the operands
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		sa := planIdentity(ctx, s.id, s.crd(0).Group)
		Expect(dryrun.Foresee(ctx, k8s, disc, dry, &sa)).To(Succeed())
		return dry
	}

	It("plans the conversion step the run takes, then the instances read where they are stored, and the run does that", func(ctx SpecContext) {
		s := newScenario("pconv")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operatorGone(ctx)
		s.movedStorage(ctx) // a-pconv/w1, stored at v1; v2 is served and stored, behind a dead webhook
		s.waitFinalizer(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group

		dry := planAsRun(ctx, s)
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Unread).To(BeEmpty())
		Expect(dry.Refusals).To(BeEmpty(), "the dry-run DELETE is sent where the instance can be read")
		Expect(dry.Items).To(ContainElements(
			And(HaveField("Action", decide.ActionUpdate), HaveField("Kind", decide.CRDKind), HaveField("Name", s.crd(0).Name()),
				HaveField("Reason", decide.UpdateConversionNone), HaveField("Message", ContainSubstring("sets spec.conversion to None"))),
			dryrun.DryRunItem{Action: decide.ActionDelete, Kind: kind, Namespace: s.ns("a"), Name: "w1", Reason: decide.DeleteOwnedOperand},
		))

		By("uninstalling: the conversion goes to None and the instance the plan named is deleted")
		s.uninstall(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.eventReasons(ctx)).To(ContainElement("ConversionDisabled"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("says the block that conversionWebhooks: Keep meets, with the run's message, and the instances it deletes once it can read them", func(ctx SpecContext) {
		s := newScenario("pconv-keep")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.ConversionWebhooks = cleanupv1alpha1.ConversionKeep })
		s.create(ctx)
		s.operatorGone(ctx)
		s.movedStorage(ctx)
		s.waitFinalizer(ctx)
		kind := s.crd(0).Kind + "." + s.crd(0).Group

		dry := planAsRun(ctx, s)
		Expect(dry.Verdict).To(Equal(decide.VerdictBlocked))
		Expect(dry.Reason).To(Equal(cleanupv1alpha1.BlockedConversionFailed))
		Expect(dry.Items).To(ContainElement(dryrun.DryRunItem{Action: decide.ActionDelete, Kind: kind, Namespace: s.ns("a"), Name: "w1", Reason: decide.DeleteOwnedOperand}))
		Expect(dry.Items).NotTo(ContainElement(HaveField("Action", decide.ActionUpdate)))
		Expect(dry.Notes).To(ContainElement(ContainSubstring("read at version v1, where they are stored")))

		By("running csv-cleaner plan: it prints the whole plan and exits 5, Blocked")
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, planBinary(), "plan", "--kubeconfig", cp.Kubeconfig, "--service-account", "plan-"+s.id+"/csv-cleaner",
			"-n", s.install.Namespace, s.install.CSVName, "-o", "json")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		var exit *exec.ExitError
		Expect(errors.As(cmd.Run(), &exit)).To(BeTrue(), "a plan whose verdict is Blocked does not exit 0")
		Expect(exit.ExitCode()).To(Equal(5), stderr.String())
		Expect(stderr.String()).To(ContainSubstring("the uninstall would be blocked: " + cleanupv1alpha1.BlockedConversionFailed))
		var printed dryrun.DryRun
		Expect(json.Unmarshal(stdout.Bytes(), &printed)).To(Succeed())
		Expect(printed).To(And(HaveField("Verdict", decide.VerdictBlocked), HaveField("Items", ConsistOf(dry.Items))))

		By("deleting the CSV: the run is blocked with the message the plan gave")
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedConversionFailed)
		Expect(dry.Message).To(HavePrefix(s.record(ctx).Status.Message))

		By("setting the conversion to None, as an admin would: the run deletes the instance the plan listed")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
		base := crd.DeepCopy()
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		Expect(k8s.Patch(ctx, crd, client.MergeFrom(base))).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
			WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("lists a kind it cannot read at any version as unread, with the API server's message, and plans every other kind", func(ctx SpecContext) {
		s := newScenario("pconv-mixed")
		s.install.CRDs = append(s.install.CRDs, fixtures.CRD{Group: "other.pconv-mixed.example.com", Kind: "Gadget", Plural: "gadgets"})
		s.createPolicy(ctx)
		s.create(ctx)
		s.operatorGone(ctx)
		s.movedStorage(ctx)
		// An instance written since the upgrade is stored at v2: no version
		// reads both. The API server takes up the new storage version a moment
		// after the CRD's update: an instance created before that is stored at
		// v1, which etcd itself says (a list could be answered by a watch
		// cache that has not caught up). Such an instance cannot be deleted
		// any more (reading it needs the dead webhook): it stays, one more
		// like w1, and the next name is tried.
		v2 := s.crd(0).Group + "/v2"
		attempt, w2 := 0, ""
		Eventually(func(g Gomega, ctx context.Context) {
			name := fmt.Sprintf("w2-%d", attempt)
			u := fixtures.Operand(s.crd(0), s.ns("b"), name)
			u.SetAPIVersion(v2)
			g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, u))).To(Succeed())
			stored, err := cp.StoredAPIVersion(ctx, fmt.Sprintf("%s/%s/%s/%s", s.crd(0).Group, s.crd(0).Plural, s.ns("b"), name))
			g.Expect(err).NotTo(HaveOccurred())
			if stored != v2 {
				attempt++
			}
			g.Expect(stored).To(Equal(v2), "%s is stored at v2", name)
			w2 = name
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		Eventually(func(g Gomega, ctx context.Context) {
			readable := 0
			for _, v := range []string{"v1", "v2"} {
				list := &metav1.PartialObjectMetadataList{}
				list.SetGroupVersionKind(schema.GroupVersionKind{Group: s.crd(0).Group, Version: v, Kind: s.crd(0).Kind + "List"})
				if k8s.List(ctx, list) == nil {
					readable++
				}
			}
			g.Expect(readable).To(BeZero(), "a version still reads every instance")
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		s.operand(ctx, 1, s.ns("a"), "g1")
		s.waitFinalizer(ctx)
		s.afterOperands()

		By("running csv-cleaner plan: it exits 0 and prints the unread kind beside the rest")
		sa := planIdentity(ctx, s.id, s.crd(0).Group, s.crd(1).Group).String()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, planBinary(), "plan", "--kubeconfig", cp.Kubeconfig, "-n", s.install.Namespace, s.install.CSVName, "--service-account", sa)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Run()).To(Succeed(), stderr.String())
		GinkgoWriter.Println(stdout.String())
		Expect(stdout.String()).To(MatchRegexp(`Verdict:\s+Incomplete: .*could not read 1 kind `))
		Expect(stdout.String()).To(MatchRegexp(`(?m)^UNREAD\s+REASON\s+WHY$`))
		Expect(stdout.String()).To(MatchRegexp(`(?m)^Widget\.pconv-mixed\.example\.com\s+ConversionFailed\s+they cannot be read before the uninstall has set the CRD's conversion to None.*conversion webhook for`))
		Expect(stdout.String()).To(MatchRegexp(`(?m)^Update\s+CustomResourceDefinition\.apiextensions\.k8s\.io\s+-\s+widgets\.pconv-mixed\.example\.com\s+ConversionToNone$`))
		Expect(stdout.String()).To(MatchRegexp(`(?m)^Delete\s+Gadget\.other\.pconv-mixed\.example\.com\s+a-pconv-mixed\s+g1\s+OwnedOperand$`))

		var dry dryrun.DryRun
		cmd = exec.CommandContext(ctx, planBinary(), "plan", "--kubeconfig", cp.Kubeconfig, "-n", s.install.Namespace, s.install.CSVName, "-o", "json", "--service-account", sa)
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(out, &dry)).To(Succeed())
		Expect(dry.Verdict).To(Equal(decide.VerdictIncomplete))
		Expect(dry.Unread).To(ConsistOf(And(HaveField("Kind", s.crd(0).Kind+"."+s.crd(0).Group), HaveField("Reason", cleanupv1alpha1.BlockedConversionFailed))))

		By("uninstalling: the run turns the conversion off and then deletes what it could not read before")
		s.uninstall(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "CRD "+s.crd(1).Name()))
		u := fixtures.Operand(s.crd(0), s.ns("b"), w2)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(u), u)).To(MatchError(ContainSubstring("not found")))
	})
})
