//go:build e2e

package e2e_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("The local cluster", func() {
	It("runs real OLM, which evaluates a CSV's requirements", func(ctx SpecContext) {
		in := fixtures.Install{Namespace: "smoke-op", CSVName: "smoke-operator.v1.0.0", Targets: []string{"smoke-a"},
			CRDs: []fixtures.CRD{{Group: "smoke.example.com", Kind: "Widget", Plural: "widgets"}}}
		for _, ns := range append([]string{in.Namespace}, in.Targets...) {
			Expect(kc.Client.Create(ctx, fixtures.Namespace(ns))).To(Succeed())
		}
		Expect(fixtures.CreateCRD(ctx, kc.Client, in.CRDObject(in.CRDs[0]))).To(Succeed())
		Expect(kc.Client.Create(ctx, in.OperatorGroup())).To(Succeed())
		Expect(kc.Client.Create(ctx, in.SampleCSV(cluster.NodeName))).To(Succeed())
		// OLM's olm operator checks the requirements; the ServiceAccount and RBAC of
		// the CSV's permissions come from the catalog operator's InstallPlan, which
		// this cluster does not run yet.
		Eventually(func(g Gomega) {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			g.Expect(kc.Client.Get(ctx, in.Key(), csv)).To(Succeed())
			g.Expect(csv.Status.Reason).To(Equal(operatorsv1alpha1.CSVReasonRequirementsNotMet))
			g.Expect(csv.Status.RequirementStatus).To(ContainElement(And(
				HaveField("Kind", "ServiceAccount"), HaveField("Name", fixtures.SampleServiceAccount),
				HaveField("Status", operatorsv1alpha1.RequirementStatusReasonNotPresent))))
			g.Expect(csv.Status.RequirementStatus).To(ContainElement(And(
				HaveField("Kind", "CustomResourceDefinition"), HaveField("Name", in.CRDs[0].Name()),
				HaveField("Status", operatorsv1alpha1.RequirementStatusReasonPresent))))
		}).WithContext(ctx).Should(Succeed())
	})
})
