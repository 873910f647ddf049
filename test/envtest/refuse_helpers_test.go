package envtest_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// refuseConfigMaps makes an admission policy that refuses, as RBAC would
// (Forbidden), the operations (one of them Update) on a ConfigMap in
// namespace whose name ends with suffix, and returns once it is in effect (a
// dry run refused); the function it returns deletes it and returns once it
// is not.
func refuseConfigMaps(ctx context.Context, namespace, suffix string, ops ...admissionregistrationv1.OperationType) func() {
	GinkgoHelper()
	name := "refuse-configmaps" + suffix + "-" + namespace
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: ops,
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "suffix", Expression: fmt.Sprintf("object.metadata.name.endsWith(%q)", suffix)}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "the test refuses every change of a ConfigMap here",
				Reason: ptr.To(metav1.StatusReasonForbidden)}}}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	// The probe is made before the policy, which would refuse it.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "refuse-probe" + suffix}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, probe))).To(Succeed())
	Expect(k8s.Create(ctx, policy)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	remove := func() {
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), policy))).To(Succeed())
	}
	DeferCleanup(remove)
	change := func(ctx context.Context) error {
		changed := probe.DeepCopy()
		changed.Data = map[string]string{"k": "v"}
		return k8s.Update(ctx, changed, client.DryRunAll)
	}
	Eventually(change).WithContext(ctx).Should(And(Satisfy(apierrors.IsForbidden), MatchError(ContainSubstring("the test refuses"))))
	return func() {
		GinkgoHelper()
		remove()
		Eventually(change).WithContext(ctx).Should(Succeed(), "the admission policy no longer in effect")
	}
}
