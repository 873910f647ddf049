//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// scenarioLabel marks a scenario's operator namespace; its CleanupPolicy
// selects CSVs by it.
const scenarioLabel = "e2e.csv-cleaner.io/scenario"

// packages are the sample catalog's packages, one per install, so that
// each install owns its own CRD.
var packages = map[string]fixtures.Package{}

// samplePackage registers a package called id that owns widgets.<id>.e2e.example.com.
func samplePackage(id string, versions ...string) string {
	packages[id] = fixtures.Package{Name: id, Versions: versions,
		CRDs: []fixtures.CRD{{Group: id + ".e2e.example.com", Kind: "Widget", Plural: "widgets"}}}
	return id
}

// install is one install of a sample package through a Subscription: the
// operator in namespace <id>, its OperatorGroup targeting <id>-a and
// <id>-b, and a CleanupPolicy <id> that selects it.
type install struct {
	id  string
	pkg fixtures.Package
	sub cluster.Subscription
	// csv is the name of the installed CSV.
	csv string
	// lastOperand is the creationTimestamp of the last operand created.
	lastOperand metav1.Time
}

func newInstall(id string) *install {
	pkg, ok := packages[id]
	Expect(ok).To(BeTrue(), "package %s is not in the sample catalog", id)
	pkg.NodeName = kc.NodeName
	return &install{id: id, pkg: pkg, csv: pkg.Head(), sub: cluster.Subscription{
		Namespace: id, Package: pkg, Catalog: catalogName, Targets: []string{id + "-a", id + "-b"},
	}}
}

func (in *install) ns(suffix string) string { return in.id + "-" + suffix }
func (in *install) crd() fixtures.CRD       { return in.pkg.CRDs[0] }
func (in *install) csvKey() types.NamespacedName {
	return types.NamespacedName{Namespace: in.sub.Namespace, Name: in.csv}
}

// create creates the namespaces and the CleanupPolicy, subscribes, waits
// for OLM to install the CSV (phase Succeeded, its InstallPlan Complete)
// and csv-cleaner to put its finalizer on it.
func (in *install) create(ctx context.Context, policy ...func(*cleanupv1alpha1.CleanupPolicySpec)) *operatorsv1alpha1.ClusterServiceVersion {
	GinkgoHelper()
	op := fixtures.Namespace(in.sub.Namespace)
	op.Labels = map[string]string{scenarioLabel: in.id}
	Expect(kc.Client.Create(ctx, op)).To(Succeed())
	for _, ns := range append(in.sub.Targets, in.ns("out")) {
		if ns != in.sub.Namespace && ns != "" {
			Expect(client.IgnoreAlreadyExists(kc.Client.Create(ctx, fixtures.Namespace(ns)))).To(Succeed())
		}
	}
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: in.id}}
	p.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: in.id}}
	for _, m := range policy {
		m(&p.Spec)
	}
	Expect(kc.Client.Create(ctx, p)).To(Succeed())
	Expect(kc.Subscribe(ctx, in.sub)).To(Succeed())
	if in.sub.Manual {
		Expect(kc.ApproveInstallPlan(ctx, in.sub, in.csv)).To(Succeed())
	}
	csv, err := kc.WaitForCSVPhase(ctx, in.csvKey(), operatorsv1alpha1.CSVPhaseSucceeded)
	Expect(err).NotTo(HaveOccurred())
	Expect(kc.WaitForInstallPlanComplete(ctx, in.sub.Namespace, in.csv)).To(Succeed())
	if !in.sub.Manual {
		// Until the catalog operator has caught up, it may still apply the
		// InstallPlan's steps from its cache, re-creating the RBAC after an
		// uninstall deleted it.
		Expect(kc.WaitForSubscriptionInstalled(ctx, in.sub, in.csv)).To(Succeed())
	}
	Eventually(func(ctx context.Context) []string { return in.finalizers(ctx) }).WithContext(ctx).
		Should(ContainElement(decide.DefaultFinalizer))
	return csv
}

// widget creates an instance of the install's CRD.
func (in *install) widget(ctx context.Context, ns, name string, finalizers ...string) {
	GinkgoHelper()
	u := fixtures.Operand(in.crd(), ns, name)
	u.SetFinalizers(finalizers)
	Expect(kc.Client.Create(ctx, u)).To(Succeed())
	in.lastOperand = u.GetCreationTimestamp()
}

func (in *install) getCSV(ctx context.Context) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	return csv, kc.Client.Get(ctx, in.csvKey(), csv)
}

// finalizers of the CSV, nil once it is gone.
func (in *install) finalizers(ctx context.Context) []string {
	csv, err := in.getCSV(ctx)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return csv.Finalizers
}

// uninstall does what a user does: delete the Subscription, then the CSV.
func (in *install) uninstall(ctx context.Context) {
	GinkgoHelper()
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: in.sub.Namespace, Name: in.pkg.Name}}
	Expect(kc.Client.Delete(ctx, sub)).To(Succeed())
	in.deleteCSV(ctx)
}

func (in *install) deleteCSV(ctx context.Context) {
	GinkgoHelper()
	csv, err := in.getCSV(ctx)
	Expect(err).NotTo(HaveOccurred())
	// An operand created in the deletion's second is kept (CreatedAfterDeletion).
	fixtures.WaitNextSecond(in.lastOperand.Time)
	Expect(kc.Client.Delete(ctx, csv)).To(Succeed())
}

func (in *install) waitCSVGone(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error { _, err := in.getCSV(ctx); return err }).WithContext(ctx).
		Should(Satisfy(apierrors.IsNotFound), "CSV %s is still there", in.csvKey())
	// csv-cleaner says Completed just after the release that let the CSV go.
	Eventually(func(ctx context.Context) string { return in.phase(ctx) }).WithContext(ctx).
		ShouldNot(HavePrefix(string(cleanupv1alpha1.PhaseReleasing)), "the record of CSV %s stays Releasing", in.csvKey())
}

// record is csv-cleaner's CSVCleanup record of the install's CSV.
func (in *install) record(ctx context.Context) (*cleanupv1alpha1.CSVCleanup, error) {
	rec := &cleanupv1alpha1.CSVCleanup{}
	return rec, kc.Client.Get(ctx, in.csvKey(), rec)
}

// phase is the record's phase/reason.
func (in *install) phase(ctx context.Context) string {
	rec, err := in.record(ctx)
	if err != nil {
		return "no record: " + err.Error()
	}
	return string(rec.Status.Phase) + "/" + rec.Status.Reason
}

// describe is the record's status as YAML, for failure messages.
func (in *install) describe(ctx context.Context) string {
	rec, err := in.record(ctx)
	if err != nil {
		return err.Error()
	}
	out, err := yaml.Marshal(rec.Status)
	if err != nil {
		return err.Error()
	}
	return "\n" + string(out)
}

func (in *install) waitPhase(ctx context.Context, want string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) string { return in.phase(ctx) }).WithContext(ctx).Should(Equal(want))
}

// remaining lists what of the install exists, as a user would see it with
// kubectl: the CSV, the CRD and every instance of it, OLM's cluster RBAC
// for the CSV (by its three owner labels), and the operator's Deployment
// and ServiceAccount, each as "Kind namespace/name".
func (in *install) remaining(ctx context.Context, others ...fixtures.CRD) []string {
	GinkgoHelper()
	var out []string
	if _, err := in.getCSV(ctx); err == nil {
		out = append(out, "CSV "+in.csvKey().String())
	}
	for _, c := range append([]fixtures.CRD{in.crd()}, others...) {
		if err := kc.Client.Get(ctx, client.ObjectKey{Name: c.Name()}, &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
			continue
		}
		out = append(out, "CRD "+c.Name())
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(c.GVK().GroupVersion().WithKind(c.Kind + "List"))
		Expect(kc.Client.List(ctx, list)).To(Succeed())
		for _, o := range list.Items {
			out = append(out, fmt.Sprintf("%s %s/%s", c.Kind, o.GetNamespace(), o.GetName()))
		}
	}
	owner := client.MatchingLabelsSelector{Selector: rbac.OwnerSelector(in.csvKey())}
	roles := &rbacv1.ClusterRoleList{}
	Expect(kc.Client.List(ctx, roles, owner)).To(Succeed())
	if len(roles.Items) > 0 {
		out = append(out, "ClusterRoles of the CSV")
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	Expect(kc.Client.List(ctx, bindings, owner)).To(Succeed())
	if len(bindings.Items) > 0 {
		out = append(out, "ClusterRoleBindings of the CSV")
	}
	for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.ServiceAccount{}} {
		key := client.ObjectKey{Namespace: in.sub.Namespace, Name: fixtures.SampleServiceAccount}
		if err := kc.Client.Get(ctx, key, o); err == nil {
			out = append(out, fmt.Sprintf("%T %s", o, key))
		}
	}
	sort.Strings(out)
	return out
}

// installed is what remaining lists for an install whose CSV is in place,
// plus the widgets given as namespace/name.
func (in *install) installed(widgets ...string) []string {
	out := []string{
		"*v1.Deployment " + in.sub.Namespace + "/" + fixtures.SampleServiceAccount,
		"*v1.ServiceAccount " + in.sub.Namespace + "/" + fixtures.SampleServiceAccount,
		"CRD " + in.crd().Name(),
		"CSV " + in.csvKey().String(),
		"ClusterRoleBindings of the CSV",
		"ClusterRoles of the CSV",
	}
	for _, w := range widgets {
		out = append(out, "Widget "+w)
	}
	sort.Strings(out)
	return out
}

// widgets lists "Widget ns/name" entries.
func widgets(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "Widget " + n
	}
	return out
}
