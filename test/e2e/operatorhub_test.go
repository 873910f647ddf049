//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	hubOperator = samplePackage("hub-op")
	hubHeld     = samplePackage("hub-held")
)

var _ = Describe("csv-cleaner installed through OperatorHub", func() {
	It("installs from catalog/, uninstalls an operator after a scale-down with the bundle's RBAC only, and uninstalls itself leaving no finalizer", func(ctx SpecContext) {
		if !kc.Local() {
			Skip("this scenario installs csv-cleaner itself from catalog/: it runs on the local cluster only")
		}
		root := controlplane.RepoRoot()
		csvName := bundleCSVName(filepath.Join(root, "bundle", "manifests", "csv-cleaner.clusterserviceversion.yaml"))
		sub := cluster.Subscription{Namespace: "csv-cleaner", Package: fixtures.Package{Name: "csv-cleaner"}, Catalog: "csv-cleaner", Targets: []string{""}}
		self := sub.CSVKey(csvName)

		By("serving catalog/ with opm behind a CatalogSource, and subscribing to csv-cleaner in channel stable")
		_, err := kc.ServeCatalogDir(ctx, "csv-cleaner", filepath.Join(root, "catalog"), "csv-cleaner")
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.Subscribe(ctx, sub)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// Another install of csv-cleaner's APIs must find no OperatorGroup providing them.
			Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, sub.OperatorGroup()))).To(Succeed())
		})
		_, err = kc.WaitForCSVPhase(ctx, self, operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.WaitForInstallPlanComplete(ctx, sub.Namespace, csvName)).To(Succeed())
		Expect(kc.WaitForSubscriptionInstalled(ctx, sub, csvName)).To(Succeed())

		By("finding what OLM created from the bundle")
		dep := &appsv1.Deployment{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: "csv-cleaner"}, dep)).To(Succeed())
		Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
		Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: "csv-cleaner"}, &corev1.ServiceAccount{})).To(Succeed())
		Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: "csv-cleaner-metrics"}, &corev1.Service{})).To(Succeed())
		roles := &rbacv1.ClusterRoleList{}
		Expect(kc.Client.List(ctx, roles, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(self)})).To(Succeed())
		Expect(roles.Items).NotTo(BeEmpty(), "OLM creates csv-cleaner's ClusterRole from the bundle's clusterPermissions")
		for _, r := range roles.Items {
			for _, rule := range r.Rules {
				Expect(rule.APIGroups).NotTo(ContainElement("*"), "ClusterRole %s", r.Name)
				Expect(rule.Resources).NotTo(ContainElement("*"), "ClusterRole %s", r.Name)
			}
		}
		operandRole := &rbacv1.ClusterRole{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: rbac.OperandRole}, operandRole)).To(Succeed(), "the bundle ships the aggregated operand role")
		Expect(operandRole.AggregationRule).NotTo(BeNil())
		for _, name := range []string{"cleanuppolicies.cleanup.csv-cleaner.io", "csvcleanups.cleanup.csv-cleaner.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(kc.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			Expect(decide.Provenance(crd.Annotations)).To(ContainElement(self), "OLM marks the CRDs it installed with csv-cleaner's CSV")
		}

		By("running csv-cleaner as the ServiceAccount OLM created, in place of the suite's")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		kubeconfig, err := kc.KubeconfigAs(types.NamespacedName{Namespace: sub.Namespace, Name: "csv-cleaner"})
		Expect(err).NotTo(HaveOccurred())
		installed := cleaner.As("csv-cleaner-olm", kubeconfig, sub.Namespace,
			"POD_NAMESPACE="+sub.Namespace, "OPERATOR_CONDITION_NAME="+csvName)
		DeferCleanup(func(ctx SpecContext) { Expect(installed.Scale(ctx, 0)).To(Succeed()) })
		Expect(installed.Scale(ctx, 2)).To(Succeed())
		Eventually(func(ctx context.Context) ([]string, error) {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			return csv.Finalizers, kc.Client.Get(ctx, self, csv)
		}).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer), "csv-cleaner holds its own CSV")
		operandSubject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sub.Namespace, Name: "csv-cleaner"}
		Eventually(func(ctx context.Context) ([]rbacv1.ClusterRoleBinding, error) {
			bindings := &rbacv1.ClusterRoleBindingList{}
			err := kc.Client.List(ctx, bindings, client.MatchingLabels{rbac.OperandBindingLabel: "true"})
			return bindings.Items, err
		}).WithContext(ctx).Should(ConsistOf(And(
			HaveField("RoleRef.Name", rbac.OperandRole),
			HaveField("Subjects", Equal([]rbacv1.Subject{operandSubject})),
			HaveField("Labels", HaveKeyWithValue(rbac.OwnerKey, self.Name)),
		)), "csv-cleaner binds its operand role to its ServiceAccount, owned by its CSV")

		By("serving metrics over HTTPS only to a token that may get /metrics (ClusterRole csv-cleaner-metrics-reader, from the bundle)")
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: "csv-cleaner-metrics-reader"}, &rbacv1.ClusterRole{})).To(Succeed())
		url := installed.MetricsURLs()[0]
		Expect(strings.HasPrefix(url, "https://")).To(BeTrue())
		// The HTTPS server starts once its certificate is made, possibly after the replica reports ready.
		Eventually(func(ctx context.Context) int { return metricsStatus(ctx, url, "") }).WithContext(ctx).Should(Equal(http.StatusUnauthorized))
		denied := serviceAccountToken(ctx, types.NamespacedName{Namespace: sub.Namespace, Name: "metrics-denied"}, "")
		Expect(metricsStatus(ctx, url, denied)).To(Equal(http.StatusForbidden))
		reader := serviceAccountToken(ctx, types.NamespacedName{Namespace: sub.Namespace, Name: "metrics-reader"}, "csv-cleaner-metrics-reader")
		Eventually(func(ctx context.Context) int { return metricsStatus(ctx, url, reader) }).WithContext(ctx).Should(Equal(http.StatusOK))

		By("scale-down-then-delete of an operator, through it, with the rights OLM's per-CRD admin role gives")
		in := newInstall(hubOperator)
		hubCSV := in.create(ctx)
		adminRole := &rbacv1.ClusterRole{}
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, client.ObjectKey{Name: in.crd().Name() + "-v1-admin"}, adminRole)
		}).WithContext(ctx).Should(Succeed(), "OLM makes a per-CRD admin role once the CSV has Succeeded")
		Expect(adminRole.Labels).To(HaveKeyWithValue(rbac.AggregateToAdminLabel, "true"))
		Expect(adminRole.Labels).To(HaveKeyWithValue(rbac.OLMManagedLabel, "true"))
		Expect(fixtures.WaitAggregated(ctx, kc.Client, rbac.OperandRole, in.crd().Group, in.crd().Plural)).To(Succeed())
		GinkgoWriter.Printf("OLM's admin role for %s was created %s after the CSV's creation and aggregated by %s\n", in.crd().Name(),
			adminRole.CreationTimestamp.Sub(hubCSV.CreationTimestamp.Time), time.Since(hubCSV.CreationTimestamp.Time).Round(time.Millisecond))
		for _, ns := range []string{in.ns("a"), in.ns("b"), in.ns("out")} {
			in.widget(ctx, ns, "w1")
		}
		Eventually(func(ctx context.Context) []string { return heldRBAC(ctx, in.csvKey()) }).WithContext(ctx).
			Should(HaveLen(2), "csv-cleaner holds the operator's ClusterRole and binding")
		Expect(installed.Scale(ctx, 0)).To(Succeed())
		in.uninstall(ctx)
		Consistently(func(g Gomega, ctx context.Context) {
			g.Expect(in.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
			g.Expect(in.remaining(ctx)).To(ContainElements(widgets(in.ns("a")+"/w1", in.ns("b")+"/w1", in.ns("out")+"/w1")))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(installed.Scale(ctx, 2)).To(Succeed())
		in.waitCSVGone(ctx)
		Eventually(func(ctx context.Context) []string { return in.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD "+in.crd().Name(), "Widget "+in.ns("out")+"/w1"))
		Expect(in.phase(ctx)).To(Equal("Completed/"), in.describe(ctx))

		By("holding another operator, whose CSV and RBAC carry csv-cleaner's finalizers")
		held := newInstall(hubHeld)
		held.create(ctx)
		Eventually(func(ctx context.Context) []string { return heldRBAC(ctx, held.csvKey()) }).WithContext(ctx).Should(HaveLen(2))

		By("finding no request the API server refused: the bundle's RBAC is enough")
		logs, err := installed.Logs()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.ToLower(logs)).NotTo(ContainSubstring("forbidden"))

		By("uninstalling csv-cleaner through OLM: its Subscription, then its CSV")
		Expect(kc.Client.Delete(ctx, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: sub.Namespace, Name: "csv-cleaner"}})).To(Succeed())
		Expect(kc.Client.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: self.Name}})).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, self, &operatorsv1alpha1.ClusterServiceVersion{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), func() string { return "csv-cleaner's CSV is gone\n" + ownUninstallState(ctx, self, installed) })

		By("finding no object that holds a finalizer of csv-cleaner's, and none of its cluster RBAC")
		Expect(finalizersLeft(ctx)).To(BeEmpty())
		Eventually(func(g Gomega, ctx context.Context) {
			roles := &rbacv1.ClusterRoleList{}
			g.Expect(kc.Client.List(ctx, roles, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(self)})).To(Succeed())
			g.Expect(roles.Items).To(BeEmpty())
			bindings := &rbacv1.ClusterRoleBindingList{}
			g.Expect(kc.Client.List(ctx, bindings, client.HasLabels{rbac.SelfBindingLabel})).To(Succeed())
			g.Expect(bindings.Items).To(BeEmpty(), "the garbage collector removes csv-cleaner's own binding with its ClusterRole")
			g.Expect(kc.Client.List(ctx, bindings, client.HasLabels{rbac.OperandBindingLabel})).To(Succeed())
			g.Expect(bindings.Items).To(BeEmpty(), "OLM deletes csv-cleaner's binding of its operand role with its CSV")
		}).WithContext(ctx).Should(Succeed())
		// OLM leaves the ClusterRoles a bundle ships as objects (it labels them olm.managed only);
		// with csv-cleaner's binding gone, csv-cleaner-operands grants nobody anything.
		leftover := "still there"
		if err := kc.Client.Get(ctx, client.ObjectKey{Name: rbac.OperandRole}, &rbacv1.ClusterRole{}); err != nil {
			leftover = err.Error()
		}
		GinkgoWriter.Printf("After csv-cleaner's uninstall, ClusterRole %s: %s\n", rbac.OperandRole, leftover)
		Expect(held.finalizers(ctx)).NotTo(ContainElement(decide.DefaultFinalizer))
		Expect(held.remaining(ctx)).To(ContainElement("CSV "+held.csvKey().String()), "csv-cleaner let go of the operator, it did not uninstall it")
	})
})

// bundleCSVName is the name of the CSV in the bundle.
func bundleCSVName(path string) string {
	GinkgoHelper()
	raw, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	Expect(yaml.Unmarshal(raw, csv)).To(Succeed())
	return csv.Name
}

// heldRBAC names the CSV's ClusterRoles and bindings that carry the RBAC hold.
func heldRBAC(ctx context.Context, csv types.NamespacedName) []string {
	GinkgoHelper()
	out, err := listHeldRBAC(ctx, csv)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// listHeldRBAC is heldRBAC without assertions, for a goroutine.
func listHeldRBAC(ctx context.Context, csv types.NamespacedName) ([]string, error) {
	var out []string
	for _, gvk := range rbac.HeldKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := kc.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(csv)}); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			if slices.Contains(o.Finalizers, rbac.HoldFinalizer) {
				out = append(out, gvk.Kind+" "+o.Name)
			}
		}
	}
	return out, nil
}

// finalizersLeft lists every CSV, ClusterRole and ClusterRoleBinding in the
// cluster that carries a finalizer of csv-cleaner's.
func finalizersLeft(ctx context.Context) []string {
	GinkgoHelper()
	var out []string
	for _, kind := range []string{"ClusterServiceVersionList", "ClusterRoleList", "ClusterRoleBindingList"} {
		list := &metav1.PartialObjectMetadataList{}
		switch kind {
		case "ClusterServiceVersionList":
			list.SetGroupVersionKind(operatorsv1alpha1.SchemeGroupVersion.WithKind(kind))
		default:
			list.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind(kind))
		}
		Expect(kc.Client.List(ctx, list)).To(Succeed())
		for _, o := range list.Items {
			for _, f := range o.Finalizers {
				if f == decide.DefaultFinalizer || f == rbac.HoldFinalizer {
					out = append(out, fmt.Sprintf("%s %s/%s: %s", strings.TrimSuffix(kind, "List"), o.Namespace, o.Name, f))
				}
			}
		}
	}
	return out
}

// metricsStatus is the HTTP status of a GET of csv-cleaner's HTTPS metrics
// endpoint (self-signed certificate) with a bearer token ("" sends none); 0
// when it does not answer.
func metricsStatus(ctx context.Context, url, token string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // csv-cleaner's certificate is self-signed
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// serviceAccountToken creates a ServiceAccount, binds it to clusterRole
// (unless ""), and returns a token of it.
func serviceAccountToken(ctx context.Context, sa types.NamespacedName, clusterRole string) string {
	GinkgoHelper()
	acct := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name}}
	Expect(kc.Client.Create(ctx, acct)).To(Succeed())
	if clusterRole != "" {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace + "-" + sa.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
		}
		Expect(kc.Client.Create(ctx, b)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, b))).To(Succeed()) })
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	Expect(kc.Client.SubResource("token").Create(ctx, acct, tr)).To(Succeed())
	Expect(tr.Status.Token).NotTo(BeEmpty())
	return tr.Status.Token
}

// ownUninstallState says where csv-cleaner's own uninstall stands, for a
// failed wait on its CSV: the CSV's finalizers and phase, what still holds
// a finalizer of csv-cleaner's, whether its replicas exited, and the end of
// their logs.
func ownUninstallState(ctx context.Context, self types.NamespacedName, replicas *cluster.Cleaner) string {
	var b strings.Builder
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := kc.Client.Get(ctx, self, csv); err != nil {
		fmt.Fprintf(&b, "CSV %s: %v\n", self, err)
	} else {
		fmt.Fprintf(&b, "CSV %s: phase %s/%s, deleting since %v, finalizers %v\n", self, csv.Status.Phase, csv.Status.Reason, csv.DeletionTimestamp, csv.Finalizers)
	}
	held, err := listHeldRBAC(ctx, self)
	fmt.Fprintf(&b, "its RBAC still held: %v (%v)\n", held, err)
	fmt.Fprintf(&b, "replicas that exited: %d\n", replicas.Exited())
	logs, err := replicas.Logs()
	if err != nil {
		fmt.Fprintf(&b, "logs: %v\n", err)
	}
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	fmt.Fprintf(&b, "the last lines of their logs:\n%s\n", strings.Join(lines[max(0, len(lines)-40):], "\n"))
	return b.String()
}
