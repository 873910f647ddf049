package envtest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/manager"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// shippedRole is manifests/rbac/role.yaml, the ClusterRole csv-cleaner ships with.
func shippedRole() *rbacv1.ClusterRole {
	GinkgoHelper()
	role, err := fixtures.ShippedClusterRole("role.yaml", "csv-cleaner")
	Expect(err).NotTo(HaveOccurred())
	Expect(role.Rules).NotTo(BeEmpty())
	return role
}

// bindRole creates role under name and a ClusterRoleBinding of the same
// name that gives it to subject, both deleted after the spec.
func bindRole(ctx context.Context, name string, role *rbacv1.ClusterRole, subject rbacv1.Subject) {
	GinkgoHelper()
	role.ObjectMeta = metav1.ObjectMeta{Name: name}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, role))).To(Succeed())
	})
}

// asUser is a client configuration of a new user of that name.
func asUser(user string) *rest.Config {
	GinkgoHelper()
	authn, err := cp.Env.AddUser(envtest.User{Name: user}, nil)
	Expect(err).NotTo(HaveOccurred())
	return rest.CopyConfig(authn.Config())
}

// runShipped runs csv-cleaner, for the rest of the spec, as its
// ServiceAccount holding nothing but the shipped RBAC: the ClusterRole of
// role.yaml, bound as make deploy binds it, and the aggregated operand role
// of operand_role.yaml, which csv-cleaner binds to itself at start. It
// returns the ServiceAccount's client configuration.
func runShipped(ctx context.Context) *rest.Config {
	GinkgoHelper()
	cfg := deployedServiceAccount(ctx)
	runShippedAs(ctx, cfg)
	return cfg
}

// runShippedAs is runShipped with the ServiceAccount's configuration made already.
func runShippedAs(ctx context.Context, cfg *rest.Config) {
	GinkgoHelper()
	Expect(fixtures.ApplyOperandRole(ctx, k8s)).To(Succeed())
	stopManager()
	startManagerAs(cfg, func(o *manager.SetupOptions) { o.OperandRole = rbac.OperandRole })
	DeferCleanup(func() {
		stopManager()
		startManager()
	})
}

// deployedSubject is csv-cleaner's ServiceAccount as deployedServiceAccount makes it.
var deployedSubject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "csv-cleaner", Name: "csv-cleaner"}

// access asks the API server whether csv-cleaner's ServiceAccount may do
// verb on resource (group/resource, name optional), in every namespace.
func access(ctx context.Context, verb, group, resource, name string) bool {
	GinkgoHelper()
	return allowed(ctx, "system:serviceaccount:csv-cleaner:csv-cleaner", []string{"system:serviceaccounts", "system:serviceaccounts:csv-cleaner"},
		authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Name: name})
}

// allowed asks the API server whether user (in groups, and authenticated)
// may do what attrs say, as kubectl auth can-i --as does.
func allowed(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: append(groups, "system:authenticated"), ResourceAttributes: &attrs}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// docBlock returns the first ```yaml block of a page of the docs (a path
// from the repository's root) after heading.
func docBlock(page, heading string) string {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), page))
	Expect(err).NotTo(HaveOccurred())
	_, after, found := strings.Cut(string(raw), heading+"\n")
	Expect(found).To(BeTrue(), "%s has no heading %q", page, heading)
	_, block, found := strings.Cut(after, "```yaml\n")
	Expect(found).To(BeTrue(), "no yaml block after %q", heading)
	block, _, found = strings.Cut(block, "```")
	Expect(found).To(BeTrue())
	return block
}

var _ = Describe("csv-cleaner's own permissions, as shipped", Ordered, func() {
	// One install, two owned CRDs: OLM made its per-CRD admin role for
	// Widget, not for Gadget (a CRD OLM did not install).
	s := newScenario("lp")
	s.install.OLMAdminRoles = true
	s.install.CRDs = append(s.install.CRDs, fixtures.CRD{Group: "lp-gadgets.example.com", Kind: "Gadget", Plural: "gadgets", NoAdminRole: true})
	widgets, gadgets := s.crd(0), s.crd(1)
	var saCfg *rest.Config

	BeforeAll(func(ctx SpecContext) {
		saCfg = runShipped(ctx)
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 1, s.ns("a"), "g1")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		Expect(fixtures.WaitAggregated(ctx, k8s, rbac.OperandRole, widgets.Group, widgets.Plural)).To(Succeed())
	})

	It("bind the aggregated operand role to csv-cleaner's ServiceAccount, and to nothing else", func(ctx SpecContext) {
		var bindings rbacv1.ClusterRoleBindingList
		Eventually(func(ctx context.Context) ([]rbacv1.ClusterRoleBinding, error) {
			err := k8s.List(ctx, &bindings, client.MatchingLabels{rbac.OperandBindingLabel: "true"})
			return bindings.Items, err
		}).WithContext(ctx).Should(ContainElement(And(
			HaveField("RoleRef.Name", rbac.OperandRole),
			HaveField("Subjects", Equal([]rbacv1.Subject{deployedSubject})),
		)))
		role := &rbacv1.ClusterRole{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: rbac.OperandRole}, role)).To(Succeed())
		Expect(role.Rules).To(ContainElement(HaveField("APIGroups", ContainElement(widgets.Group))))
		Expect(role.Rules).NotTo(ContainElement(HaveField("APIGroups", ContainElement(gadgets.Group))))
	})

	It("find the binding on a restart without asking to create it again (no 409 AlreadyExists)", func(ctx SpecContext) {
		var creates []string
		var mu sync.Mutex
		cfg := rest.CopyConfig(cp.Config)
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPost {
					mu.Lock()
					creates = append(creates, req.URL.Path)
					mu.Unlock()
				}
				return rt.RoundTrip(req)
			})
		}
		c, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		binder := rbac.OperandBinder{Live: c, Writer: c, Role: rbac.OperandRole}
		Eventually(func(ctx context.Context) error {
			_, _, err := binder.Ensure(ctx, deployedSubject, nil)
			return err
		}).WithContext(ctx).Should(Succeed()) // the running csv-cleaner made it
		mu.Lock()
		creates = nil
		mu.Unlock()
		name, created, err := binder.Ensure(ctx, deployedSubject, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(created).To(BeFalse())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRoleBinding{})).To(Succeed())
		mu.Lock()
		defer mu.Unlock()
		Expect(creates).To(BeEmpty())
	})

	DescribeTable("SubjectAccessReviews for csv-cleaner's ServiceAccount",
		func(ctx SpecContext, allowed bool, verb, group, resource, name string) {
			Expect(access(ctx, verb, group, resource, name)).To(Equal(allowed))
		},
		Entry("list the OLM-installed CRD's instances", true, "list", "lp.example.com", "widgets", ""),
		Entry("delete the OLM-installed CRD's instances", true, "delete", "lp.example.com", "widgets", ""),
		Entry("patch the OLM-installed CRD's instances", true, "patch", "lp.example.com", "widgets", ""),
		Entry("patch CSVs", true, "patch", "operators.coreos.com", "clusterserviceversions", ""),
		Entry("delete ClusterRoles (the policy narrows it to OLM's owner labels)", true, "delete", "rbac.authorization.k8s.io", "clusterroles", ""),
		Entry("delete ClusterRoleBindings", true, "delete", "rbac.authorization.k8s.io", "clusterrolebindings", ""),
		Entry("delete ValidatingWebhookConfigurations", true, "delete", "admissionregistration.k8s.io", "validatingwebhookconfigurations", ""),
		Entry("delete MutatingWebhookConfigurations", true, "delete", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", ""),
		Entry("bind its operand role", true, "bind", "rbac.authorization.k8s.io", "clusterroles", rbac.OperandRole),

		Entry("not get Secrets", false, "get", "", "secrets", ""),
		Entry("not list Secrets", false, "list", "", "secrets", ""),
		Entry("not delete Secrets", false, "delete", "", "secrets", ""),
		Entry("not patch Secrets", false, "patch", "", "secrets", ""),
		Entry("not get ConfigMaps", false, "get", "", "configmaps", ""),
		Entry("not delete ConfigMaps", false, "delete", "", "configmaps", ""),
		Entry("not patch ConfigMaps", false, "patch", "", "configmaps", ""),
		Entry("not get Pods", false, "get", "", "pods", ""),
		Entry("not delete Pods", false, "delete", "", "pods", ""),
		Entry("not patch Pods", false, "patch", "", "pods", ""),
		Entry("not patch Deployments", false, "patch", "apps", "deployments", ""),
		Entry("not delete Deployments", false, "delete", "apps", "deployments", ""),
		Entry("not get DaemonSets", false, "get", "apps", "daemonsets", ""),
		Entry("not delete DaemonSets", false, "delete", "apps", "daemonsets", ""),
		Entry("not patch DaemonSets", false, "patch", "apps", "daemonsets", ""),
		Entry("not delete Namespaces", false, "delete", "", "namespaces", ""),
		Entry("not patch Namespaces", false, "patch", "", "namespaces", ""),
		Entry("not get Nodes", false, "get", "", "nodes", ""),
		Entry("not delete Nodes", false, "delete", "", "nodes", ""),
		Entry("not patch Nodes", false, "patch", "", "nodes", ""),
		Entry("not list the other CRD's instances", false, "list", "lp-gadgets.example.com", "gadgets", ""),
		Entry("not delete the other CRD's instances", false, "delete", "lp-gadgets.example.com", "gadgets", ""),
		Entry("not patch the other CRD's instances", false, "patch", "lp-gadgets.example.com", "gadgets", ""),
		Entry("not create ClusterRoles", false, "create", "rbac.authorization.k8s.io", "clusterroles", ""),
		Entry("not create Roles", false, "create", "rbac.authorization.k8s.io", "roles", ""),
		Entry("not create RoleBindings", false, "create", "rbac.authorization.k8s.io", "rolebindings", ""),
		Entry("not bind cluster-admin", false, "bind", "rbac.authorization.k8s.io", "clusterroles", "cluster-admin"),
		Entry("not escalate ClusterRoles", false, "escalate", "rbac.authorization.k8s.io", "clusterroles", ""),
		Entry("not impersonate users", false, "impersonate", "", "users", ""),
		Entry("not impersonate ServiceAccounts", false, "impersonate", "", "serviceaccounts", ""),
		Entry("not anything on everything", false, "*", "*", "*", ""),
	)

	It("cannot create RBAC other than its own binding", func(ctx SpecContext) {
		as, err := client.New(saCfg, client.Options{Scheme: k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		forbidden := func(obj client.Object) {
			GinkgoHelper()
			Expect(as.Create(ctx, obj, client.DryRunAll)).To(Satisfy(apierrors.IsForbidden), "%T %s", obj, obj.GetName())
		}
		forbidden(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lp-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{deployedSubject}})
		forbidden(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "lp-everything"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}})
		forbidden(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "lp-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{deployedSubject}})
		// Its own binding, as it makes it at start: allowed (a dry run).
		Expect(as.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lp-operands"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbac.OperandRole},
			Subjects: []rbacv1.Subject{deployedSubject}}, client.DryRunAll)).To(Succeed())
	})

	It("block the uninstall, deleting nothing, on the CRD OLM did not install, naming the kind, the verbs and the label, and it resumes once the role docs/rights.md shows is applied", func(ctx SpecContext) {
		By("planning first: a SubjectAccessReview for the ServiceAccount csv-cleaner runs as (found from its operand binding) foresees the missing right")
		dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(dryrun.Foresee(ctx, k8s, disc, dry, nil)).To(Succeed())
		Expect(dry.Verdict).To(Equal(decide.VerdictBlocked))
		Expect(dry.Reason).To(Equal(cleanupv1alpha1.BlockedForbidden))
		Expect(dry.Refusals).To(ConsistOf(And(HaveField("Kind", "Gadget."+gadgets.Group), HaveField("Reason", cleanupv1alpha1.BlockedForbidden))))

		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/Forbidden")
		msg := s.record(ctx).Status.Message
		Expect(msg).To(Equal(dry.Refusals[0].Message), "the plan names the missing right as the run's record does")
		Expect(msg).To(ContainSubstring("csv-cleaner may not list, delete gadgets.lp-gadgets.example.com (kind Gadget.lp-gadgets.example.com)"))
		Expect(msg).To(ContainSubstring("rbac.authorization.k8s.io/aggregate-to-admin=true"))
		Expect(msg).To(ContainSubstring(rbac.OperandGrantLabel + "=true"))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))
		// Nothing deleted, not even the Widget csv-cleaner may delete.
		Expect(s.remaining(ctx)).To(ContainElements("Widget "+s.ns("a")+"/w1", "Gadget "+s.ns("a")+"/g1", "CSV", "ClusterRole lp-role"))

		By("applying the ClusterRole docs/rights.md shows, for the Gadget's group")
		grant := &rbacv1.ClusterRole{}
		Expect(yaml.Unmarshal([]byte(strings.ReplaceAll(docBlock("docs/rights.md", "## Operands of CRDs OLM did not install"), "example.com", gadgets.Group)), grant)).To(Succeed())
		Expect(grant.Labels).To(HaveKeyWithValue(rbac.OperandGrantLabel, "true"))
		Expect(k8s.Create(ctx, grant)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, grant))).To(Succeed()) })

		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).
			WithTimeout(90 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.remaining(ctx)).To(ConsistOf("CRD "+widgets.Name(), "CRD "+gadgets.Name()))
		Expect(s.phase(ctx)).To(Equal("Completed/"))
	})
})

// staleLister answers List with a copy taken earlier, as a lagging cache does.
type staleLister struct {
	client.Reader
	items []metav1.PartialObjectMetadata
}

func (s staleLister) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("staleLister lists metadata only, not %T", list)
	}
	l.Items = nil
	for _, it := range s.items {
		if it.GetObjectKind().GroupVersionKind().Kind+"List" == l.GetObjectKind().GroupVersionKind().Kind {
			l.Items = append(l.Items, it)
		}
	}
	return nil
}

var _ = Describe("Holding an operator's cluster RBAC with only csv-cleaner's rights", func() {
	It("succeeds from a stale copy, which the API server refuses as an escalation rather than a conflict", func(ctx SpecContext) {
		csv := types.NamespacedName{Namespace: "op-stale", Name: "stale.v1"}
		Expect(k8s.Create(ctx, fixtures.OwnedClusterRole("stale-op", csv))).To(Succeed())
		Expect(k8s.Create(ctx, fixtures.OwnedClusterRoleBinding("stale-op", csv))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			for _, o := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
				o.SetName("stale-op")
				releaseAndDelete(ctx, o)
			}
		})

		By("taking a copy of the binding and the role, then changing both")
		var stale []metav1.PartialObjectMetadata
		for _, gvk := range rbac.HeldKinds {
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(gvk)
			Expect(k8s.Get(ctx, client.ObjectKey{Name: "stale-op"}, obj)).To(Succeed())
			stale = append(stale, *obj.DeepCopy())
			Expect(k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"changed":"after-the-copy"}}}`)))).To(Succeed())
		}

		By("holding them from the stale copy as a user with the shipped ClusterRole, who lacks the operator's rights")
		const user = "csv-cleaner-stale"
		bindRole(ctx, user, shippedRole(), rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user})
		as, err := client.New(asUser(user), client.Options{})
		Expect(err).NotTo(HaveOccurred())
		holder := rbac.Holder{Lister: staleLister{items: stale}, Live: as, Writer: as, Finalizer: "test.csv-cleaner.io/stale-hold"}
		Eventually(func(ctx context.Context) (int, error) { return holder.Hold(ctx, csv) }).WithContext(ctx).Should(Equal(2))
		Expect(rbacFinalizers(ctx, "stale-op")).To(Equal([][]string{{"test.csv-cleaner.io/stale-hold"}, {"test.csv-cleaner.io/stale-hold"}}))
	})
})
