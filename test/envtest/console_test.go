package envtest_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// consoleCRD is the OpenShift console operator's configuration kind, as
// far as csv-cleaner reads it: spec.plugins, the enabled ConsolePlugins.
func consoleCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "consoles.operator.openshift.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: csvcontroller.ConsoleKind.Group, Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "consoles", Singular: "console", Kind: csvcontroller.ConsoleKind.Kind, ListKind: "ConsoleList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: csvcontroller.ConsoleKind.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {
						Type: "object", XPreserveUnknownFields: ptr.To(true),
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"plugins": {
							Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}},
					}},
				}}}},
		},
	}
}

var _ = Describe("The operator's console plugins, on OpenShift", Ordered, func() {
	console := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(csvcontroller.ConsoleKind)
		u.SetName("cluster")
		return u
	}
	enabled := func(ctx context.Context) []string {
		c := console()
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		plugins, _, err := unstructured.NestedStringSlice(c.Object, "spec", "plugins")
		Expect(err).NotTo(HaveOccurred())
		return plugins
	}
	annotate := func(ctx context.Context, s *scenario, plugins string) {
		GinkgoHelper()
		csv, err := s.getCSV(ctx)
		Expect(err).NotTo(HaveOccurred())
		base := csv.DeepCopy()
		metav1.SetMetaDataAnnotation(&csv.ObjectMeta, objects.ConsolePluginsAnnotation, plugins)
		Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
	}

	BeforeAll(func(ctx SpecContext) {
		crd := consoleCRD()
		Expect(k8s.Create(ctx, crd)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, crd))).To(Succeed()) })
		Eventually(func(ctx context.Context) error {
			return k8s.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "operator.openshift.io/v1", "kind": "ConsoleList"}})
		}).WithContext(ctx).Should(Succeed())
		c := console()
		c.Object["spec"] = map[string]any{"plugins": []any{"monitoring-plugin", "db-console", "shared-console", "other-console"}}
		Expect(k8s.Create(ctx, c)).To(Succeed())
	})

	It("takes the plugins the CSV names out of the enabled ones, keeps one another CSV names, whatever the policy keeps", func(ctx SpecContext) {
		other := newScenario("console-other")
		other.create(ctx)
		annotate(ctx, other, `["shared-console"]`)

		s := newScenario("console")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.Operands = cleanupv1alpha1.Orphan })
		s.create(ctx)
		s.waitFinalizer(ctx)
		annotate(ctx, s, `["db-console", "shared-console", "never-enabled"]`)
		s.uninstall(ctx)

		Expect(enabled(ctx)).To(Equal([]string{"monitoring-plugin", "shared-console", "other-console"}))
		Expect(s.eventReasons(ctx)).To(ContainElement("ConsolePluginsDisabled"))
	})

	It("disables nothing for a malformed annotation, with a Warning Event, and goes on", func(ctx SpecContext) {
		s := newScenario("console-bad")
		s.createPolicy(ctx)
		s.create(ctx)
		s.waitFinalizer(ctx)
		annotate(ctx, s, `other-console`) // a bare name, not the JSON list the console reads
		s.uninstall(ctx)

		Expect(enabled(ctx)).To(ContainElement("other-console"))
		Expect(s.eventReasons(ctx)).To(ContainElement("ConsolePluginsMalformed"))
		Expect(s.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseCompleted) + "/"))
	})
})
