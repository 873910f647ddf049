package envtest_test

import (
	"context"
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// closedURL is an https URL on the loopback address where nothing listens:
// a webhook whose endpoint no longer answers.
func closedURL() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	return "https://127.0.0.1:" + strconv.Itoa(port) + "/"
}

// refusingWebhook is a fail-closed validating webhook on the DELETE of the
// scenario's Widgets whose endpoint does not answer; named <id>-<suffix>,
// with the given labels, deleted after the spec.
func (s *scenario) refusingWebhook(ctx context.Context, suffix, webhook string, labels map[string]string) {
	GinkgoHelper()
	url := closedURL()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: s.id + "-" + suffix, Labels: labels},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    webhook,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](2),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{s.crd(0).Group}, APIVersions: []string{"*"}, Resources: []string{s.crd(0).Plural}},
			}},
		}},
	}
	Expect(k8s.Create(ctx, cfg)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, cfg))).To(Succeed()) })
}

var _ = Describe("A request the API server refuses", func() {
	It("blocks the uninstall at once as AdmissionRefused, naming a foreign webhook that cannot be called, never touches it, and Orphan releases the CSV after operandTimeout", func(ctx SpecContext) {
		s := newScenario("refused")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
			p.OperandTimeout = &metav1.Duration{Duration: 8 * time.Second}
			p.OnTimeout = cleanupv1alpha1.TimeoutOrphan
		})
		s.installWithOperand(ctx)
		s.refusingWebhook(ctx, "policy-engine", "deny-deletes.policy.example.com", nil)

		By("planning first: a dry-run DELETE foresees the refusal, once the API server has loaded the webhook")
		sa := planIdentity(ctx, s.id, s.crd(0).Group)
		var dry *dryrun.DryRun
		Eventually(func(g Gomega, ctx context.Context) {
			var err error
			dry, err = csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(dryrun.Foresee(ctx, k8s, disc, dry, &sa)).To(Succeed())
			g.Expect(dry.Verdict).To(Equal(decide.VerdictBlocked), dry.Message)
		}).WithContext(ctx).Should(Succeed())
		Expect(dry.Reason).To(Equal(cleanupv1alpha1.BlockedAdmissionRefused))
		Expect(dry.Refusals).To(ConsistOf(And(HaveField("Kind", "Widget."+s.crd(0).Group), HaveField("Reason", cleanupv1alpha1.BlockedAdmissionRefused))))
		Expect(dry.Items).To(ContainElement(dryrun.DryRunItem{Action: decide.ActionDelete, Kind: "Widget." + s.crd(0).Group, Namespace: s.ns("a"), Name: "w1", Reason: decide.DeleteOwnedOperand}))
		s.deleteCSV(ctx)

		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedAdmissionRefused)
		rec := s.record(ctx)
		Expect(rec.Status.Message).To(Equal(dry.Refusals[0].Message), "the plan names the refusal as the run's record does")
		Expect(rec.Status.Message).To(ContainSubstring(`failed calling webhook "deny-deletes.policy.example.com"`))
		Expect(rec.Status.Message).To(ContainSubstring("Widget." + s.crd(0).Group + " " + s.ns("a") + "/w1"))
		Expect(rec.Status.Conditions).To(ContainElement(And(HaveField("Type", "Blocked"), HaveField("Status", metav1.ConditionTrue))))
		Expect(rec.Status.Blocking).To(ConsistOf(And(HaveField("Name", "w1"), HaveField("Reason", cleanupv1alpha1.BlockedAdmissionRefused))))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))

		By("releasing the CSV once operandTimeout has passed, the refused Widget kept and listed with its reason")
		s.csvGone(ctx)
		rec = s.record(ctx)
		Expect(rec.Status.Phase).To(BeEquivalentTo("Completed"))
		Expect(kept(rec, "Widget."+s.crd(0).Group)).To(ContainElement(cleanupv1alpha1.BlockedAdmissionRefused + "=1"))
		Expect(s.eventReasons(ctx)).To(ContainElement("OperandKept"))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+s.crd(0).Name(), "Widget "+s.ns("a")+"/w1", "ValidatingWebhookConfiguration "+s.id+"-policy-engine"))
	})

	It("deletes the operator's own webhook configuration (its three OLM owner labels) at once when it refuses and the operator is unavailable, and completes", func(ctx SpecContext) {
		s := newScenario("refused-own")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operatorGone(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.waitFinalizer(ctx)
		s.refusingWebhook(ctx, "own", "vwidget.refused-own.example.com", rbac.OwnerLabels(s.install.Key()))
		s.deleteCSV(ctx)

		s.csvGone(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.eventReasons(ctx)).To(ContainElement("OperatorWebhookDeleted"))
	})
})

var _ = Describe("Malformed target namespaces", func() {
	DescribeTable("block the uninstall as TargetNamespacesUnknown, quoting what was found, and delete nothing anywhere",
		func(ctx SpecContext, id string, status []string, annotation string, says string) {
			s := newScenario(id)
			s.createPolicy(ctx)
			csv := s.create(ctx)
			s.operand(ctx, 0, s.ns("a"), "w1")
			s.operand(ctx, 0, s.ns("elsewhere"), "w1")
			s.waitFinalizer(ctx)

			og := &operatorsv1.OperatorGroup{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.install.Namespace, Name: s.install.OperatorGroupName()}, og)).To(Succeed())
			if len(status) == 1 && status[0] == "" {
				// An all-namespaces group, in sync with its status: only the annotation disagrees.
				og.Spec.TargetNamespaces = nil
				Expect(k8s.Update(ctx, og)).To(Succeed())
			}
			ogBase := og.DeepCopy()
			og.Status.Namespaces = status
			Expect(k8s.Status().Patch(ctx, og, client.MergeFrom(ogBase))).To(Succeed())
			base := csv.DeepCopy()
			csv.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] = annotation
			Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())

			s.deleteCSV(ctx)
			s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedTargetNamespacesUnknown)
			Expect(s.record(ctx).Status.Message).To(ContainSubstring(says))
			Consistently(s.remaining).WithContext(ctx).WithTimeout(2 * time.Second).
				Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1", "Widget "+s.ns("elsewhere")+"/w1"))
		},
		Entry("a blank olm.targetNamespaces", "targets-blank", nil, " ",
			`the CSV's olm.targetNamespaces annotation is " ", which has a blank name`),
		Entry(`"" beside a name in status.namespaces`, "targets-mixed", []string{"", "a-targets-mixed"}, "a-targets-mixed",
			`status.namespaces ["" "a-targets-mixed"], which has "" (every namespace) beside namespace names`),
		Entry("status.namespaces [\"\"] while the annotation names one namespace", "targets-disagree", []string{""}, "a-targets-disagree",
			`status.namespaces [""] but the CSV's olm.targetNamespaces annotation is "a-targets-disagree": one says every namespace`),
	)
})

var _ = Describe("The record's times", func() {
	It("say when the uninstall completed, later than when it started, for an uninstall that waits", func(ctx SpecContext) {
		s := newScenario("times")
		s.createPolicy(ctx)
		s.create(ctx)
		w := s.operand(ctx, 0, s.ns("a"), "w1", operandHold)
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Deleting/")
		time.Sleep(2 * time.Second) // the operator takes its time to finalize the operand
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		w.SetFinalizers(nil)
		Expect(k8s.Update(ctx, w)).To(Succeed())
		s.csvGone(ctx)
		rec := s.record(ctx)
		Expect(rec.Status.CompletionTime.Time).To(BeTemporally(">=", rec.Status.StartTime.Add(2*time.Second)))
	})
})

// movedStorage gives the scenario's CRD a version v2, creates the operand
// a-<id>/w1 while v1 is the storage version, then makes v2 the storage
// version with a conversion webhook whose endpoint does not answer, as an
// operator upgrade without a storage migration leaves it once the operator
// is gone: every read at v2 of what is stored at v1 needs the webhook.
func (s *scenario) movedStorage(ctx context.Context) {
	GinkgoHelper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	Expect(k8s.Update(ctx, crd)).To(Succeed())
	s.operand(ctx, 0, s.ns("a"), "w1")

	Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
	url := closedURL()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	Expect(k8s.Update(ctx, crd)).To(Succeed())
	// Whatever the spec comes to, the webhook is turned off after it: a CRD
	// whose objects the API server cannot decode stalls its watch cache and
	// kube-controller-manager's garbage collector, for every later spec.
	DeferCleanup(func(ctx SpecContext) {
		Eventually(func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd); err != nil {
				return client.IgnoreNotFound(err)
			}
			base := crd.DeepCopy()
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
			return k8s.Patch(ctx, crd, client.MergeFrom(base))
		}).WithContext(ctx).Should(Succeed())
	})
}

// operatorGone points the CSV's install strategy at a Deployment nobody creates.
func (s *scenario) operatorGone(ctx context.Context) {
	GinkgoHelper()
	csv, err := s.getCSV(ctx)
	Expect(err).NotTo(HaveOccurred())
	base := csv.DeepCopy()
	csv.Spec.InstallStrategy = s.install.SampleCSV("").Spec.InstallStrategy
	Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
}

var _ = Describe("An unreachable conversion webhook of a proven CRD, the operator gone", func() {
	It("is set to None, as OLM does once the CSV is gone, and the uninstall completes", func(ctx SpecContext) {
		s := newScenario("conv")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operatorGone(ctx)
		s.movedStorage(ctx)
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)

		s.csvGone(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.eventReasons(ctx)).To(ContainElement("ConversionDisabled"))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
		Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.NoneConverter))
	})

	It("blocks the uninstall as ConversionFailed with conversionWebhooks: Keep, the conversion left as it is", func(ctx SpecContext) {
		s := newScenario("conv-keep")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.ConversionWebhooks = cleanupv1alpha1.ConversionKeep })
		s.create(ctx)
		s.operatorGone(ctx)
		s.movedStorage(ctx)
		s.waitFinalizer(ctx)
		s.deleteCSV(ctx)

		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedConversionFailed)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("conversion webhook for " + s.crd(0).Group + "/v1"))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
		Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.WebhookConverter))
		Expect(s.remaining(ctx)).To(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))

		By("letting it go, as an admin would, by setting the conversion to None")
		base := crd.DeepCopy()
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		Expect(k8s.Patch(ctx, crd, client.MergeFrom(base))).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
			WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	})
})

var _ = Describe("OperatorGroups that leave the targets in doubt", func() {
	It("block the uninstall while two OperatorGroups share the namespace, deleting nothing, and it resumes once one remains", func(ctx SpecContext) {
		s := newScenario("two-ogs")
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		second := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: s.install.Namespace, Name: "second"},
			Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{s.ns("b")}}}
		Expect(k8s.Create(ctx, second)).To(Succeed())
		s.deleteCSV(ctx)

		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedTooManyOperatorGroups)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("holds 2 OperatorGroups (second, " + s.install.OperatorGroupName() + ")"))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(2 * time.Second).
			Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1", "ClusterRole two-ogs-role", "ClusterRoleBinding two-ogs-role"))

		By("removing the second OperatorGroup")
		Expect(k8s.Delete(ctx, second)).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
			WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("block the uninstall while an OperatorGroup's status lags its spec, and it resumes once OLM catches up", func(ctx SpecContext) {
		s := newScenario("og-lag")
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		og := &operatorsv1.OperatorGroup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.install.Namespace, Name: s.install.OperatorGroupName()}, og)).To(Succeed())
		og.Spec.TargetNamespaces = []string{s.ns("a")} // b-og-lag is no target any more; OLM has not written that yet
		Expect(k8s.Update(ctx, og)).To(Succeed())
		s.deleteCSV(ctx)

		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedOperatorGroupOutOfSync)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring(`has status.namespaces ["a-og-lag" "b-og-lag"] but its spec names ["a-og-lag"]`))
		Expect(s.remaining(ctx)).To(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))

		By("writing the status as OLM would")
		base := og.DeepCopy()
		og.Status.Namespaces = []string{s.ns("a")}
		Expect(k8s.Status().Patch(ctx, og, client.MergeFrom(base))).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
			WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})
})
