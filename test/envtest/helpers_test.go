package envtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// scenario is one operator install with its own namespaces, CRD group,
// cluster object names and a CleanupPolicy that selects only its CSV.
type scenario struct {
	id      string
	install fixtures.Install
	policy  *cleanupv1alpha1.CleanupPolicy
	// lastOperand is the creationTimestamp of the last operand created.
	lastOperand metav1.Time
}

// afterOperands waits until the second after the last operand's
// creationTimestamp. A spec that deletes the CSV while csv-cleaner does
// not watch (stopped, or behind a proxy that cuts its watches) needs it
// (startManagerAs waits until a started csv-cleaner watches): csv-cleaner then cannot know the revision at which
// the deletion began, and keeps an operand of the deletion's second as of
// unknown age (CreatedInDeletionSecond), a rule those specs do not test.
func (s *scenario) afterOperands() {
	fixtures.WaitNextSecond(s.lastOperand.Time)
}

// newScenario describes an install: operator namespace op-<id>, targets
// a-<id> and b-<id>, one namespaced CRD widgets.<id>.example.com. Nothing is
// created yet.
func newScenario(id string) *scenario {
	return &scenario{id: id, install: fixtures.Install{
		Namespace: "op-" + id,
		CSVName:   id + "-operator.v1.0.0",
		Targets:   []string{"a-" + id, "b-" + id},
		CRDs:      []fixtures.CRD{{Group: id + ".example.com", Kind: "Widget", Plural: "widgets"}},
		Labels:    map[string]string{"test": id},
	}}
}

func (s *scenario) ns(prefix string) string { return prefix + "-" + s.id }
func (s *scenario) crd(i int) fixtures.CRD  { return s.install.CRDs[i] }

// createPolicy creates a CleanupPolicy that selects the scenario's CSV.
func (s *scenario) createPolicy(ctx context.Context, mutate ...func(*cleanupv1alpha1.CleanupPolicySpec)) {
	GinkgoHelper()
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: s.id}}
	p.Spec.CSVSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": s.id}}
	for _, m := range mutate {
		m(&p.Spec)
	}
	Expect(k8s.Create(ctx, p)).To(Succeed())
	s.policy = p
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, p))).To(Succeed()) })
}

// create creates the install and returns its CSV.
func (s *scenario) create(ctx context.Context) *operatorsv1alpha1.ClusterServiceVersion {
	GinkgoHelper()
	csv, err := s.install.Create(ctx, k8s)
	Expect(err).NotTo(HaveOccurred())
	return csv
}

// operand creates an instance of CRD i, with optional finalizers.
func (s *scenario) operand(ctx context.Context, i int, ns, name string, finalizers ...string) *unstructured.Unstructured {
	GinkgoHelper()
	u := fixtures.Operand(s.crd(i), ns, name)
	u.SetFinalizers(finalizers)
	if ns != "" {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(ns)))).To(Succeed())
	}
	Expect(k8s.Create(ctx, u)).To(Succeed())
	s.lastOperand = u.GetCreationTimestamp()
	return u
}

// ownedRBAC creates a ClusterRole and binding named <id>-<suffix> with the CSV's three owner labels.
func (s *scenario) ownedRBAC(ctx context.Context, suffix string) {
	GinkgoHelper()
	name := s.id + "-" + suffix
	Expect(k8s.Create(ctx, fixtures.OwnedClusterRole(name, s.install.Key()))).To(Succeed())
	Expect(k8s.Create(ctx, fixtures.OwnedClusterRoleBinding(name, s.install.Key()))).To(Succeed())
}

// clusterRole creates a ClusterRole named <id>-<suffix> with the given labels.
func (s *scenario) clusterRole(ctx context.Context, suffix string, labels map[string]string) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: s.id + "-" + suffix, Labels: labels}})).To(Succeed())
}

func (s *scenario) getCSV(ctx context.Context) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	return csv, k8s.Get(ctx, s.install.Key(), csv)
}

// finalizers returns the CSV's finalizers, or nil when it is gone.
func (s *scenario) finalizers(ctx context.Context) []string {
	csv, err := s.getCSV(ctx)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return csv.Finalizers
}

func (s *scenario) waitFinalizer(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) []string { return s.finalizers(ctx) }).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))
}

func (s *scenario) deleteCSV(ctx context.Context) {
	GinkgoHelper()
	csv, err := s.getCSV(ctx)
	Expect(err).NotTo(HaveOccurred())
	if running == nil {
		s.afterOperands() // no watch sees the deletion begin: see afterOperands
	}
	Expect(k8s.Delete(ctx, csv)).To(Succeed())
}

// installWithOperand creates the install with one operand, a-<id>/w1, and
// owned cluster RBAC, <id>-role, and waits for csv-cleaner's finalizer. The
// scenario's policy is created first.
func (s *scenario) installWithOperand(ctx context.Context) {
	GinkgoHelper()
	s.create(ctx)
	s.operand(ctx, 0, s.ns("a"), "w1")
	s.ownedRBAC(ctx, "role")
	s.waitFinalizer(ctx)
}

// uninstall deletes the CSV and waits until it is gone.
func (s *scenario) uninstall(ctx context.Context) {
	GinkgoHelper()
	s.deleteCSV(ctx)
	s.csvGone(ctx)
}

func (s *scenario) csvGone(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound))
	// csv-cleaner says Completed just after the release that let the CSV go.
	Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).
		ShouldNot(HavePrefix(string(cleanupv1alpha1.PhaseReleasing)))
}

func (s *scenario) record(ctx context.Context) *cleanupv1alpha1.CSVCleanup {
	GinkgoHelper()
	rec := &cleanupv1alpha1.CSVCleanup{}
	Expect(k8s.Get(ctx, s.install.Key(), rec)).To(Succeed())
	return rec
}

func (s *scenario) phase(ctx context.Context) string {
	rec := &cleanupv1alpha1.CSVCleanup{}
	if err := k8s.Get(ctx, s.install.Key(), rec); err != nil {
		return "no record: " + err.Error()
	}
	return string(rec.Status.Phase) + "/" + rec.Status.Reason
}

func (s *scenario) waitPhase(ctx context.Context, want string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) string { return s.phase(ctx) }).WithContext(ctx).Should(Equal(want))
}

// remaining lists, as a user would with kubectl, what of the scenario
// exists: the CSV, its CRDs and every instance of them, the cluster roles,
// bindings and webhook configurations whose names start with the id.
func (s *scenario) remaining(ctx context.Context) []string {
	GinkgoHelper()
	var out []string
	if _, err := s.getCSV(ctx); err == nil {
		out = append(out, "CSV")
	}
	for _, c := range s.install.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: c.Name()}, crd); apierrors.IsNotFound(err) {
			continue
		}
		out = append(out, "CRD "+c.Name())
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(c.GVK().GroupVersion().WithKind(c.Kind + "List"))
		Expect(k8s.List(ctx, list)).To(Succeed())
		for _, o := range list.Items {
			out = append(out, fmt.Sprintf("%s %s", c.Kind, path(o.GetNamespace(), o.GetName())))
		}
	}
	add := func(kind string, list client.ObjectList) {
		Expect(k8s.List(ctx, list)).To(Succeed())
		items, err := metaItems(list)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range items {
			if strings.HasPrefix(name, s.id+"-") {
				out = append(out, kind+" "+name)
			}
		}
	}
	add("ClusterRole", &rbacv1.ClusterRoleList{})
	add("ClusterRoleBinding", &rbacv1.ClusterRoleBindingList{})
	add("ValidatingWebhookConfiguration", &admissionregistrationv1.ValidatingWebhookConfigurationList{})
	add("MutatingWebhookConfiguration", &admissionregistrationv1.MutatingWebhookConfigurationList{})
	sort.Strings(out)
	return out
}

func path(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func metaItems(list client.ObjectList) ([]string, error) {
	var names []string
	switch l := list.(type) {
	case *rbacv1.ClusterRoleList:
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case *rbacv1.ClusterRoleBindingList:
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case *admissionregistrationv1.ValidatingWebhookConfigurationList:
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case *admissionregistrationv1.MutatingWebhookConfigurationList:
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return names, nil
}

// eventReasons lists the reasons of the Events about the CSV, in the CSV's namespace.
func (s *scenario) eventReasons(ctx context.Context) []string {
	GinkgoHelper()
	list := &eventsv1.EventList{}
	Expect(k8s.List(ctx, list, client.InNamespace(s.install.Namespace))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "ClusterServiceVersion" && e.Regarding.Name == s.install.CSVName {
			out = append(out, e.Reason)
		}
	}
	return out
}

// eventNotes are the notes of the Events of reason regarding the CSV.
func (s *scenario) eventNotes(ctx context.Context, reason string) []string {
	GinkgoHelper()
	list := &eventsv1.EventList{}
	Expect(k8s.List(ctx, list, client.InNamespace(s.install.Namespace))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "ClusterServiceVersion" && e.Regarding.Name == s.install.CSVName && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// eventCount counts the Events of reason regarding the CSV, each Event's
// series (repeats of an identical Event) included.
func (s *scenario) eventCount(ctx context.Context, reason string) int {
	GinkgoHelper()
	list := &eventsv1.EventList{}
	Expect(k8s.List(ctx, list, client.InNamespace(s.install.Namespace))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind != "ClusterServiceVersion" || e.Regarding.Name != s.install.CSVName || e.Reason != reason {
			continue
		}
		if e.Series != nil {
			n += int(e.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// kept returns the record's kept counts for a kind as reason=count strings.
func kept(rec *cleanupv1alpha1.CSVCleanup, kind string) []string {
	var out []string
	for _, c := range rec.Status.Counts {
		if c.Kind != kind {
			continue
		}
		for _, k := range c.Kept {
			out = append(out, fmt.Sprintf("%s=%d", k.Reason, k.Count))
		}
	}
	return out
}

// count returns the record's counts for a kind.
func count(rec *cleanupv1alpha1.CSVCleanup, kind string) cleanupv1alpha1.KindCount {
	for _, c := range rec.Status.Counts {
		if c.Kind == kind {
			return c
		}
	}
	return cleanupv1alpha1.KindCount{Kind: kind}
}

// addOwned makes the CSV own one more CRD, as a hand-edited or broken CSV might.
func addOwned(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, name, kind string) {
	GinkgoHelper()
	base := csv.DeepCopy()
	csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned,
		operatorsv1alpha1.CRDDescription{Name: name, Version: "v1", Kind: kind})
	Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
}

// planIdentity is a ServiceAccount, named after the scenario, that may do
// on the instances of group what an uninstall does (list, delete, patch),
// bound for the spec; returned as csv-cleaner plan --service-account takes
// it. The plan checks that identity's rights: the suite runs csv-cleaner
// as an administrator, whose ServiceAccount the plan would find bare.
func planIdentity(ctx context.Context, id string, groups ...string) types.NamespacedName {
	GinkgoHelper()
	sa := types.NamespacedName{Namespace: "plan-" + id, Name: "csv-cleaner"}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(sa.Namespace)))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name}}))).To(Succeed())
	bindRole(ctx, "identity-for-"+id, &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{
		APIGroups: groups, Resources: []string{"*"}, Verbs: []string{"list", "delete", "patch"},
	}}}, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name})
	// The API server's authorizer sees a new binding a moment after it is
	// written: the plan asks only once it does, as a user who runs it later would.
	for _, group := range groups {
		Eventually(func(g Gomega) {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               serviceaccount.MakeUsername(sa.Namespace, sa.Name),
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: "*", Verb: "delete"},
			}}
			g.Expect(k8s.Create(ctx, sar)).To(Succeed())
			g.Expect(sar.Status.Allowed).To(BeTrue(), "the authorizer has not seen the binding yet")
		}).WithContext(ctx).Should(Succeed())
	}
	return sa
}

var (
	planBinOnce sync.Once
	planBin     string
	planBinErr  error
)

// planBinary builds bin/csv-cleaner once for the suite, for the specs that
// run `csv-cleaner plan` as a user does.
func planBinary() string {
	GinkgoHelper()
	planBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "csv-cleaner-bin-")
		if err != nil {
			planBinErr = err
			return
		}
		planBin = filepath.Join(dir, "csv-cleaner")
		build := exec.Command("go", "build", "-o", planBin, "./cmd/csv-cleaner")
		build.Dir = controlplane.RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			planBinErr = fmt.Errorf("building csv-cleaner: %w: %s", err, out)
		}
	})
	Expect(planBinErr).NotTo(HaveOccurred())
	return planBin
}
