package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Whose rights `csv-cleaner plan` foresees: the identity csv-cleaner runs
// as, which it binds to its operand role at every start, never a name
// taken for granted.
var _ = Describe("csv-cleaner plan's foresight of rights", func() {
	// oneIdentity removes the operand bindings earlier specs left behind: the
	// cluster is then one where csv-cleaner has run as a single identity.
	oneIdentity := func(ctx context.Context) {
		GinkgoHelper()
		clear := func(ctx context.Context) {
			Expect(k8s.DeleteAllOf(ctx, &rbacv1.ClusterRoleBinding{}, client.MatchingLabels{rbac.OperandBindingLabel: "true"})).To(Succeed())
		}
		clear(ctx)
		DeferCleanup(clear)
	}
	planOf := func(ctx context.Context, s *scenario, sa *types.NamespacedName) *dryrun.DryRun {
		GinkgoHelper()
		s.afterOperands()
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dryrun.Foresee(ctx, k8s, disc, dry, sa)).To(Succeed())
		return dry
	}
	// boundTo waits for csv-cleaner's operand binding of subject.
	boundTo := func(ctx context.Context, subject rbacv1.Subject) {
		GinkgoHelper()
		Eventually(func(ctx context.Context) ([]rbacv1.ClusterRoleBinding, error) {
			list := &rbacv1.ClusterRoleBindingList{}
			err := k8s.List(ctx, list, client.MatchingLabels{rbac.OperandBindingLabel: "true"})
			return list.Items, err
		}).WithContext(ctx).Should(ContainElement(HaveField("Subjects", Equal([]rbacv1.Subject{subject}))))
	}

	It("are those of the ServiceAccount csv-cleaner runs as, whatever its name; a ServiceAccount that does not exist is a note, never Blocked", func(ctx SpecContext) {
		oneIdentity(ctx)
		s := newScenario("pid-sa")
		s.install.OLMAdminRoles = true // the operand role aggregates OLM's per-CRD admin role
		runShippedAs(ctx, shippedServiceAccount(ctx, "ops-pid-sa", "cleaner", "shipped-for-pidsa"))
		boundTo(ctx, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ops-pid-sa", Name: "cleaner"})
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, s.crd(0).Group, s.crd(0).Plural)).To(Succeed())

		dry := planOf(ctx, s, nil)
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Refusals).To(BeEmpty())
		Expect(dry.Notes).To(BeEmpty())

		By("naming a ServiceAccount that does not exist, the old default's way")
		dry = planOf(ctx, s, &types.NamespacedName{Namespace: "nowhere-pid-sa", Name: "csv-cleaner"})
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Refusals).To(BeEmpty())
		Expect(dry.Notes).To(ConsistOf(ContainSubstring("ServiceAccount nowhere-pid-sa/csv-cleaner (--service-account) does not exist")))

		By("uninstalling as the plan said")
		s.uninstall(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("are those of the kubeconfig user csv-cleaner runs as, with the groups it holds its rights through", func(ctx SpecContext) {
		oneIdentity(ctx)
		s := newScenario("pid-user")
		// An administrator's kubeconfig: every right through a group, none in the user's name.
		authn, err := cp.Env.AddUser(envtest.User{Name: "pid-admin", Groups: []string{"pid-admins"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		admins := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "pid-admins"}
		bindRole(ctx, "pid-admins", &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, admins)
		runShippedAs(ctx, rest.CopyConfig(authn.Config()))
		boundTo(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "pid-admin"})
		s.createPolicy(ctx)
		s.installWithOperand(ctx)

		dry := planOf(ctx, s, nil)
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Refusals).To(BeEmpty())
		Expect(dry.Notes).To(BeEmpty())

		By("uninstalling as the plan said")
		s.uninstall(ctx)
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("are not foreseen, with a note saying why, where no identity csv-cleaner runs as can be found", func(ctx SpecContext) {
		oneIdentity(ctx) // and the suite's csv-cleaner binds none: it runs with no operand role
		s := newScenario("pid-none")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.installWithOperand(ctx)

		dry := planOf(ctx, s, nil)
		Expect(dry.Verdict).To(Equal(decide.VerdictUninstall), dry.Message)
		Expect(dry.Refusals).To(BeEmpty())
		Expect(dry.Notes).To(ConsistOf(ContainSubstring("no identity it runs as was found")))
	})
})
