//go:build e2e

package e2e_test

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

var v1Managed = olmv1Package("v1-managed")

var _ = Describe("csv-cleaner installed by OLM v1 as a ClusterExtension", func() {
	It("installs from bundle/ and catalog-olmv1/, holds its own extension and another, and its uninstall leaves no finalizer of its own", func(ctx SpecContext) {
		if !kc.Local() {
			Skip("this scenario starts a cluster of its own: it runs on the local cluster only")
		}
		By("starting a cluster without csv-cleaner's CRDs (operator-controller installs them from the bundle), with OLM v1")
		c, err := cluster.StartForOLMv1(kc.BinDir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Stop)
		olm, err := c.StartOLMv1(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(olm.Stop)
		root := controlplane.RepoRoot()
		bundleName := bundleCSVName(filepath.Join(root, "bundle", "manifests", "csv-cleaner.clusterserviceversion.yaml"))
		_, err = olm.ServeBundleDir(ctx, "csv-cleaner", filepath.Join(root, "bundle"), filepath.Join(root, "catalog-olmv1", "csv-cleaner"), bundleName)
		Expect(err).NotTo(HaveOccurred())
		managed := v1Managed
		_, err = olm.ServeCatalog(ctx, olmv1Catalog, managed)
		Expect(err).NotTo(HaveOccurred())

		By("installing csv-cleaner as ClusterExtension csv-cleaner into namespace csv-cleaner")
		self := installExtension(ctx, c.Client, "csv-cleaner", "csv-cleaner", olmv1.SelfPackage, bundleName)
		for _, name := range []string{"cleanuppolicies.cleanup.csv-cleaner.io", "csvcleanups.cleanup.csv-cleaner.io", "extensioncleanups.cleanup.csv-cleaner.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(c.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			Expect(metav1.GetControllerOf(crd)).To(HaveField("UID", self.UID), "operator-controller owns csv-cleaner's CRD %s", name)
		}

		By("running csv-cleaner as the ServiceAccount operator-controller created, with the pod environment OLM v1 gives (POD_NAMESPACE only)")
		base, err := c.Cleaner(ctx)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := c.KubeconfigAs(types.NamespacedName{Namespace: "csv-cleaner", Name: "csv-cleaner"})
		Expect(err).NotTo(HaveOccurred())
		installed := base.As("csv-cleaner-olmv1", kubeconfig, "csv-cleaner", "POD_NAMESPACE=csv-cleaner")
		DeferCleanup(func(ctx SpecContext) { Expect(installed.Scale(ctx, 0)).To(Succeed()) })
		Expect(installed.Scale(ctx, 1)).To(Succeed())
		finalizersOf := func(name string) func(context.Context) []string {
			return func(ctx context.Context) []string {
				ext := &ocv1.ClusterExtension{}
				if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, ext); err != nil {
					return nil
				}
				return ext.Finalizers
			}
		}
		Eventually(finalizersOf(self.Name)).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer),
			"no policy selects it, yet csv-cleaner holds the extension that installed it")

		By("holding another extension a CleanupPolicy selects")
		p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: managed.Name}}
		p.Spec.ClusterExtensionSelector = &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: managed.Name}}
		Expect(c.Client.Create(ctx, p)).To(Succeed())
		other := installExtension(ctx, c.Client, managed.Name, managed.Name, managed.Name, managed.Head())
		Eventually(finalizersOf(other.Name)).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))

		By("finding no request the API server refused while csv-cleaner ran with the bundle's RBAC")
		logs, err := installed.Logs()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.ToLower(logs)).NotTo(ContainSubstring("forbidden"))

		By("uninstalling csv-cleaner: deleting its ClusterExtension")
		Expect(c.Client.Delete(ctx, self, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return c.Client.Get(ctx, client.ObjectKeyFromObject(self), &ocv1.ClusterExtension{})
		}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Satisfy(apierrors.IsNotFound), "csv-cleaner's ClusterExtension is gone")
		Expect(finalizersOf(other.Name)(ctx)).NotTo(ContainElement(decide.DefaultFinalizer), "csv-cleaner let go of the other extension")
		ext := &ocv1.ClusterExtension{}
		Expect(c.Client.Get(ctx, client.ObjectKeyFromObject(other), ext)).To(Succeed())
		Expect(ext.DeletionTimestamp).To(BeNil(), "csv-cleaner let go of the other extension, it did not uninstall it")
		// The garbage collector now deletes csv-cleaner's Deployment and RBAC; the kubelet stops its pod.
		Expect(installed.Scale(ctx, 0)).To(Succeed())

		By("finding that the garbage collector removes csv-cleaner's CRDs, and with them its policies")
		Eventually(func(ctx context.Context) error {
			return c.Client.Get(ctx, client.ObjectKey{Name: "cleanuppolicies.cleanup.csv-cleaner.io"}, &apiextensionsv1.CustomResourceDefinition{})
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
	})
})
