package envtest_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// refuseConfigMapUpdates makes an admission policy that refuses every update
// of a ConfigMap in namespace, and returns once it is in effect (a dry run
// refused); the function it returns deletes it.
func refuseConfigMapUpdates(ctx context.Context, namespace string) func() {
	GinkgoHelper()
	name := "refuse-configmaps-" + namespace
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "the test refuses every change of a ConfigMap here"}}}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	Expect(k8s.Create(ctx, policy)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	remove := func() {
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), policy))).To(Succeed())
	}
	DeferCleanup(remove)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "refuse-probe"}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, probe))).To(Succeed())
	Eventually(func(ctx context.Context) error {
		changed := probe.DeepCopy()
		changed.Data = map[string]string{"k": "v"}
		return k8s.Update(ctx, changed, client.DryRunAll)
	}).WithContext(ctx).Should(MatchError(ContainSubstring("the test refuses")))
	return func() {
		GinkgoHelper()
		remove()
		Eventually(func(ctx context.Context) error {
			changed := probe.DeepCopy()
			changed.Data = map[string]string{"k": "v"}
			return k8s.Update(ctx, changed, client.DryRunAll)
		}).WithContext(ctx).Should(Succeed(), "the admission policy no longer in effect")
	}
}
