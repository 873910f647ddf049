package envtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// shippedRole is manifests/rbac/role.yaml, the ClusterRole csv-cleaner ships with.
func shippedRole() *rbacv1.ClusterRole {
	GinkgoHelper()
	b, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.Unmarshal(b, role)).To(Succeed())
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

// runAs binds role to a new user and restarts csv-cleaner as that user for the rest of the spec.
func runAs(ctx context.Context, user string, role *rbacv1.ClusterRole) {
	GinkgoHelper()
	bindRole(ctx, user, role, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user})
	cfg := asUser(user)
	stopManager()
	startManagerAs(cfg)
	DeferCleanup(func() {
		stopManager()
		startManager()
	})
}

var _ = Describe("csv-cleaner's own permissions", func() {
	It("are enough with the shipped ClusterRole to complete an uninstall", func(ctx SpecContext) {
		runAs(ctx, "csv-cleaner-shipped", shippedRole())
		s := newScenario("shipped")
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		s.uninstall(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(s.eventReasons(ctx)).To(ContainElement("CleanupCompleted"))
	})

	It("block the uninstall, deleting nothing more, while a delete is refused, and it resumes once granted", func(ctx SpecContext) {
		s := newScenario("forbidden")
		// The shipped role, but delete only on RBAC, webhooks and CRDs: not on the operands' group.
		role := shippedRole()
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "*") })
		role.Rules = append(role.Rules,
			rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"list"}},
			rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"delete", "patch"}})
		runAs(ctx, "csv-cleaner-restricted", role)
		s.createPolicy(ctx)
		s.installWithOperand(ctx)
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/Forbidden")
		Expect(s.record(ctx).Status.Message).To(ContainSubstring(s.ns("a") + "/w1"))
		Expect(s.eventReasons(ctx)).To(ContainElement("Blocked"))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "ClusterRole forbidden-role", "ClusterRoleBinding forbidden-role", "Widget " + s.ns("a") + "/w1"}))

		By("granting delete on the operands' group")
		granted := &rbacv1.ClusterRole{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "csv-cleaner-restricted"}, granted)).To(Succeed())
		base := granted.DeepCopy()
		granted.Rules = append(granted.Rules, rbacv1.PolicyRule{APIGroups: []string{s.crd(0).Group}, Resources: []string{"*"}, Verbs: []string{"delete", "patch"}})
		Expect(k8s.Patch(ctx, granted, client.MergeFrom(base))).To(Succeed())
		s.csvGone(ctx)
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
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
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
				o.SetFinalizers(nil)
				Expect(k8s.Update(ctx, o)).To(Succeed())
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
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
