package envtest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// deployedServiceAccount is csv-cleaner's ServiceAccount as make deploy
// creates it, bound to the shipped ClusterRole; it returns a client
// configuration that authenticates with a token of it.
func deployedServiceAccount(ctx context.Context) *rest.Config {
	GinkgoHelper()
	return shippedServiceAccount(ctx, "csv-cleaner", "csv-cleaner", "deployed-csv-cleaner")
}

// shippedServiceAccount is deployedServiceAccount for a ServiceAccount of
// another name, bound to the shipped ClusterRole by a binding named binding.
func shippedServiceAccount(ctx context.Context, namespace, name, binding string) *rest.Config {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(namespace)))).To(Succeed())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, sa))).To(Succeed())
	bindRole(ctx, binding, shippedRole(), rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name})
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	Expect(k8s.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

// applyFence creates the admission policy and binding of manifests/admission, as make deploy does.
func applyFence(ctx context.Context) {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "admission", "policy.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	Expect(dec.Decode(policy)).To(Succeed())
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	Expect(dec.Decode(binding)).To(Succeed())
	Expect(policy.Name).To(Equal("csv-cleaner-fence"))
	Expect(binding.Spec.PolicyName).To(Equal(policy.Name))
	Expect(k8s.Create(ctx, policy)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, policy))).To(Succeed())
	})
}

var _ = Describe("The admission policy make deploy applies", func() {
	It("refuses csv-cleaner's ServiceAccount what its rules never do, and lets an uninstall complete", func(ctx SpecContext) {
		saCfg := deployedServiceAccount(ctx)
		as, err := client.New(saCfg, client.Options{Scheme: k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())

		By("creating objects csv-cleaner's rules never delete or change")
		s := newScenario("fence")
		s.install.OLMAdminRoles = true
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.ownedRBAC(ctx, "role")
		s.clusterRole(ctx, "plain", map[string]string{"olm.owner": s.install.CSVName}) // olm.owner alone, as bundle RBAC has
		plainBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-plain"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: s.id + "-plain"}}
		Expect(k8s.Create(ctx, plainBinding)).To(Succeed())
		hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-plain"}}
		Expect(k8s.Create(ctx, hook)).To(Succeed())
		unproven := fixtures.CRD{Group: "fence-unproven.example.com", Kind: "Gadget", Plural: "gadgets", NoProvenance: true}
		Expect(fixtures.CreateCRD(ctx, k8s, s.install.CRDObject(unproven))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			for _, o := range []client.Object{plainBinding, hook, s.install.CRDObject(unproven)} {
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
			}
		})
		clusterAdminBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}}

		applyFence(ctx)

		By("refusing, as dry runs so that nothing goes while the policy loads, every delete csv-cleaner's rules never make")
		refused := func(obj client.Object, what string) {
			GinkgoHelper()
			Eventually(func(ctx context.Context) error { return as.Delete(ctx, obj, client.DryRunAll) }).WithContext(ctx).
				Should(MatchError(ContainSubstring(what)), "%T %s", obj, obj.GetName())
		}
		ownerLabels := "csv-cleaner may delete only the ClusterRoles, ClusterRoleBindings and webhook configurations that carry OLM's three owner labels"
		refused(clusterAdminBinding, ownerLabels)
		refused(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}}, ownerLabels)
		refused(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-plain"}}, ownerLabels)
		refused(plainBinding, ownerLabels)
		refused(hook, ownerLabels)
		refused(s.install.CRDObject(unproven), "csv-cleaner may delete only the CRDs OLM installed with a ClusterServiceVersion")

		By("refusing a change of a CSV's or a ClusterRole's content, allowing a change of finalizers")
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		Expect(as.Get(ctx, s.install.Key(), csv)).To(Succeed())
		relabelled := csv.DeepCopy()
		relabelled.Labels["stolen"] = "token"
		Expect(as.Patch(ctx, relabelled, client.MergeFrom(csv), client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change only metadata.finalizers")))
		// RBAC's escalation check skips a change of only finalizers and owner
		// references; an owner reference naming an object that is gone would
		// have the garbage collector delete cluster-admin.
		admin := &rbacv1.ClusterRole{}
		Expect(as.Get(ctx, client.ObjectKey{Name: "cluster-admin"}, admin)).To(Succeed())
		owned := admin.DeepCopy()
		owned.OwnerReferences = append(owned.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "00000000-0000-0000-0000-000000000000"})
		Expect(as.Patch(ctx, owned, client.MergeFrom(admin), client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change only metadata.finalizers")))
		plain := &rbacv1.ClusterRole{}
		Expect(as.Get(ctx, client.ObjectKey{Name: s.id + "-plain"}, plain)).To(Succeed())
		relabelledRole := plain.DeepCopy()
		relabelledRole.Labels["olm.owner.kind"] = "ClusterServiceVersion"
		Expect(as.Patch(ctx, relabelledRole, client.MergeFrom(plain), client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change only metadata.finalizers")))
		finalized := csv.DeepCopy()
		finalized.Finalizers = append(finalized.Finalizers, "fence.example.com/test")
		Expect(as.Patch(ctx, finalized, client.MergeFrom(csv), client.DryRunAll)).To(Succeed())

		By("letting it change a CRD only to set spec.conversion to None, and only a CRD OLM installed")
		crdOf := func(name string) *apiextensionsv1.CustomResourceDefinition {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(as.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			return crd
		}
		none := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		proven := crdOf(s.crd(0).Name())
		proven.Spec.Conversion = none
		Expect(as.Update(ctx, proven, client.DryRunAll)).To(Succeed())
		proven = crdOf(s.crd(0).Name())
		proven.Labels = map[string]string{"stolen": "token"}
		Expect(as.Update(ctx, proven, client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change a CRD only to set its spec.conversion to None")))
		other := crdOf(unproven.Name())
		other.Spec.Conversion = none
		Expect(as.Update(ctx, other, client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change a CRD only to set its spec.conversion to None")))
		Expect(as.Patch(ctx, crdOf(s.crd(0).Name()), client.RawPatch(types.MergePatchType, []byte(`{}`)), client.DryRunAll)).
			To(Satisfy(apierrors.IsForbidden), "no patch on CRDs, which server-side apply could use to create one")

		By("letting it detach a CRD OLM v1 applied from its ClusterExtension, and change nothing else of it or of the extension")
		e := newExtScenario("xfence")
		e.objs, err = e.ext.Create(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			e.deleteExtension(ctx, nil)
			Eventually(e.dropOLMFinalizers).WithContext(ctx).Should(BeTrue())
		})
		detached := crdOf(e.objs.CRDs[0].Name)
		detached.OwnerReferences = nil
		delete(detached.Labels, olmv1.ExtensionOwnerKindLabel)
		delete(detached.Labels, olmv1.ExtensionOwnerNameLabel)
		Expect(as.Update(ctx, detached, client.DryRunAll)).To(Succeed())
		relabelledCRD := crdOf(e.objs.CRDs[0].Name)
		relabelledCRD.OwnerReferences = nil
		relabelledCRD.Labels["stolen"] = "token"
		Expect(as.Update(ctx, relabelledCRD, client.DryRunAll)).
			To(MatchError(ContainSubstring("or to detach a CRD OLM v1 applied from its ClusterExtension")))
		reowned := crdOf(e.objs.CRDs[0].Name)
		reowned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "00000000-0000-0000-0000-000000000000"}}
		Expect(as.Update(ctx, reowned, client.DryRunAll)).
			To(MatchError(ContainSubstring("or to detach a CRD OLM v1 applied from its ClusterExtension")))
		ext := &ocv1.ClusterExtension{}
		Expect(as.Get(ctx, client.ObjectKey{Name: e.ext.Name}, ext)).To(Succeed())
		respecified := ext.DeepCopy()
		respecified.Spec.Source.Catalog.Version = ">=99.0.0" // an upgrade nobody asked for
		Expect(as.Patch(ctx, respecified, client.MergeFrom(ext), client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may change only metadata.finalizers")))

		By("refusing a ClusterRoleBinding for anyone but csv-cleaner itself, even of the one role it may bind")
		operandBinding := func(subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
			return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-operands"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbac.OperandRole},
				Subjects: []rbacv1.Subject{subject}}
		}
		Expect(fixtures.ApplyOperandRole(ctx, k8s)).To(Succeed())
		Expect(as.Create(ctx, operandBinding(rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}), client.DryRunAll)).
			To(MatchError(ContainSubstring("csv-cleaner may create only ClusterRoleBindings whose one subject is its own ServiceAccount")))
		Expect(as.Create(ctx, operandBinding(deployedSubject), client.DryRunAll)).To(Succeed())

		By("running csv-cleaner as that ServiceAccount with the shipped RBAC: the uninstall completes, its CRD included")
		runShippedAs(ctx, saCfg)
		s.waitFinalizer(ctx)
		s.uninstall(ctx)
		Eventually(s.remaining).WithContext(ctx).Should(ConsistOf("ClusterRole "+s.id+"-plain", "ClusterRoleBinding "+s.id+"-plain", "ValidatingWebhookConfiguration "+s.id+"-plain"))
		Expect(s.phase(ctx)).To(Equal("Completed/"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(clusterAdminBinding), clusterAdminBinding)).To(Succeed())
	})
})
