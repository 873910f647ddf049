//go:build e2e

package e2e_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var smoke = samplePackage("smoke")

var _ = Describe("The cluster", func() {
	It("installs a package through a Subscription with what csv-cleaner relies on OLM to do", func(ctx SpecContext) {
		in := newInstall(smoke)
		csv := in.create(ctx)
		By("OLM's own finalizer, the CRD's provenance, cluster RBAC with owner labels, and namespaced objects owned by the CSV")
		Expect(csv.Finalizers).To(ContainElements("operators.coreos.com/csv-cleanup", decide.DefaultFinalizer))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: in.crd().Name()}, crd)).To(Succeed())
		Expect(decide.Provenance(crd.Annotations)).To(ConsistOf(in.csvKey()))
		Expect(in.remaining(ctx)).To(Equal(in.installed()))
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.ServiceAccount{}} {
			Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: in.sub.Namespace, Name: fixtures.SampleServiceAccount}, o)).To(Succeed())
			Expect(o.GetOwnerReferences()).To(ContainElement(And(HaveField("Kind", "ClusterServiceVersion"), HaveField("UID", csv.UID))))
		}
	})
})
