package envtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// collectors is opentelemetry-operator's OpenTelemetryCollector kind, from
// its community bundle, as an operator upgraded across its storage version
// and then removed leaves it: objects stored at v1alpha1, v1beta1 the
// storage version, and a conversion webhook nobody serves. (The bundle's
// webhook is a Service; here it is a closed port on 127.0.0.1, so that the
// API server dials nothing but the loopback address.)
type collectors struct {
	crd *apiextensionsv1.CustomResourceDefinition
}

const collectorsCRD = "opentelemetrycollectors.opentelemetry.io"

var collectorGVK = schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "OpenTelemetryCollector"}

// installCollectors installs the bundle's CRD; mended and deleted after the
// spec, so that no later spec meets a kind nobody can read.
func installCollectors(ctx context.Context) *collectors {
	GinkgoHelper()
	path, err := controlplane.OpenTelemetryCollectorCRD()
	Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	c := &collectors{crd: &apiextensionsv1.CustomResourceDefinition{}}
	Expect(yaml.Unmarshal(raw, c.crd)).To(Succeed())
	Expect(c.crd.Name).To(Equal(collectorsCRD))
	crd := c.storedAt("v1alpha1", nil)
	Expect(fixtures.CreateCRD(ctx, k8s, crd)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		c.update(ctx, c.storedAt("v1beta1", nil))
		got := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: collectorsCRD}}
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, got))).To(Succeed())
		Eventually(func(ctx context.Context) bool { return present(ctx, got) }).WithContext(ctx).WithTimeout(time.Minute).Should(BeFalse())
	})
	return c
}

// storedAt is the bundle's CRD with version the storage version, and the
// conversion webhook at url (none when url is nil).
func (c *collectors) storedAt(version string, url *string) *apiextensionsv1.CustomResourceDefinition {
	crd := c.crd.DeepCopy()
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	if url != nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: url},
				ConversionReviewVersions: c.crd.Spec.Conversion.Webhook.ConversionReviewVersions}}
	}
	return crd
}

// update replaces the CRD's spec with want's.
func (c *collectors) update(ctx context.Context, want *apiextensionsv1.CustomResourceDefinition) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: collectorsCRD}, crd); err != nil {
			return client.IgnoreNotFound(err)
		}
		crd.Spec = want.Spec
		return k8s.Update(ctx, crd)
	}).WithContext(ctx).Should(Succeed())
}

// strand creates collectors (namespace/name, each owned by the object
// owners names, when it does) stored at v1alpha1, then makes v1beta1 the
// storage version behind a conversion webhook that does not answer: from
// then on nobody can read them, the garbage collector neither.
func (c *collectors) strand(ctx context.Context, objs map[collectorKey]client.Object) {
	GinkgoHelper()
	c.update(ctx, c.storedAt("v1alpha1", nil))
	for key, owner := range objs {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(key.ns)))).To(Succeed())
		// The API server takes up a new storage version a moment after the
		// CRD's update: a collector stored at another is made again.
		Eventually(func(g Gomega, ctx context.Context) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(collectorGVK)
			u.SetNamespace(key.ns)
			u.SetName(key.name)
			if owner != nil {
				u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner)})
			}
			g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, u))).To(Succeed())
			stored, err := cp.StoredAPIVersion(ctx, fmt.Sprintf("opentelemetry.io/opentelemetrycollectors/%s/%s", key.ns, key.name))
			g.Expect(err).NotTo(HaveOccurred())
			if stored != "opentelemetry.io/v1alpha1" {
				g.Expect(k8s.Delete(ctx, u)).To(Succeed())
			}
			g.Expect(stored).To(Equal("opentelemetry.io/v1alpha1"))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	}
	url := closedURL() + "convert"
	c.update(ctx, c.storedAt("v1beta1", &url))
	// At v1beta1, the version the garbage collector and Velero read.
	Eventually(func(ctx context.Context) error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollectorList"})
		return k8s.List(ctx, list, client.Limit(500))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("conversion webhook for opentelemetry.io/v1alpha1")))
}

// mend sets the conversion to None, as an admin would: the collectors read again.
func (c *collectors) mend(ctx context.Context) {
	GinkgoHelper()
	c.update(ctx, c.storedAt("v1beta1", nil))
}

// stored reports whether etcd still holds the collector.
func stored(ctx context.Context, ns, name string) bool {
	GinkgoHelper()
	v, err := cp.StoredAPIVersion(ctx, "opentelemetry.io/opentelemetrycollectors/"+ns+"/"+name)
	Expect(err).NotTo(HaveOccurred())
	return v != ""
}

// collectorKey is a collector's namespace and name.
type collectorKey struct{ ns, name string }

// widget is the scenario's operand w1 in a-<id>, read.
func (s *scenario) widget(ctx context.Context) *unstructured.Unstructured {
	GinkgoHelper()
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(s.crd(0).GVK())
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: s.ns("a"), Name: "w1"}, w)).To(Succeed())
	return w
}

// runCLI runs bin/csv-cleaner with args and returns its stdout and exit code.
func runCLI(ctx context.Context, args ...string) (string, int) {
	GinkgoHelper()
	stdout, stderr, code := runCLIAll(ctx, args...)
	if code != 0 {
		GinkgoWriter.Println(stderr)
	}
	return stdout, code
}

// runCLIAll runs the csv-cleaner binary as runCLI does, and returns what
// it printed on stdout and on stderr, and its exit code.
func runCLIAll(ctx context.Context, args ...string) (string, string, int) {
	GinkgoHelper()
	return runCLIWith(ctx, cp.Kubeconfig, args...)
}

// runCLIWith is runCLIAll as the identity of kubeconfig.
func runCLIWith(ctx context.Context, kubeconfig string, args ...string) (string, string, int) {
	GinkgoHelper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, planBinary(), append(args, "--kubeconfig", kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred(), stderr.String())
	return stdout.String(), stderr.String(), 0
}

// downAPI registers an aggregated API, group/version, whose Service does
// not exist, as one whose server is gone leaves it: kube-apiserver dials
// nothing, says it is not Available, and discovery cannot describe it.
// It is removed after the spec.
func downAPI(ctx context.Context, group, version string) {
	GinkgoHelper()
	svc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"group": group, "version": version, "groupPriorityMinimum": int64(100), "versionPriority": int64(10),
		"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": "default", "name": "gone-" + group},
	}}}
	svc.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	svc.SetName(version + "." + group)
	Expect(k8s.Create(ctx, svc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, svc))).To(Succeed()) })
	Eventually(func(ctx context.Context) error {
		_, err := disc.ServerResourcesForGroupVersion(group + "/" + version)
		return err
	}).WithContext(ctx).Should(HaveOccurred())
}

// backupPlanIdentity is planIdentity that may also do, in every namespace,
// what the backup gate does in Velero's (velero.Rights): the identity a
// plan foresees csv-cleaner's rights for, holding them all.
func backupPlanIdentity(ctx context.Context, id string, groups ...string) types.NamespacedName {
	GinkgoHelper()
	sa := planIdentity(ctx, id, groups...)
	role := &rbacv1.ClusterRole{}
	for _, r := range velero.Rights {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource}, Verbs: []string{r.Verb}})
	}
	bindRole(ctx, "backup-identity-for-"+id, role, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name})
	Eventually(func(g Gomega) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               serviceaccount.MakeUsername(sa.Namespace, sa.Name),
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "velero.io", Resource: "backups", Verb: "create"},
		}}
		g.Expect(k8s.Create(ctx, sar)).To(Succeed())
		g.Expect(sar.Status.Allowed).To(BeTrue(), "the authorizer has not seen the binding yet")
	}).WithContext(ctx).Should(Succeed())
	return sa
}

// unreadSpecs are the specs of a kind nobody can read elsewhere in the
// cluster (docs/backup.md, "A kind nobody can read"): they run in the
// backup gate's ordered container, after its first spec.
func unreadSpecs() {
	It("names an API that does not answer in the plan, never fails it, and waits on it under a backup; an aggregated metrics API that is down is no matter", func(ctx SpecContext) {
		startFakeVelero(ctx, "velero-down", "Available")
		downAPI(ctx, "down.unr-down.example.com", "v1")
		downAPI(ctx, "metrics.k8s.io", "v1beta1")
		s := newScenario("unr-down")
		s.createPolicy(ctx, backupTo("velero-down"))
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.waitFinalizer(ctx)
		s.afterOperands()

		out, code := runCLI(ctx, "plan", "-n", s.install.Namespace, s.install.CSVName, "-o", "json", "--service-account", backupPlanIdentity(ctx, s.id, s.crd(0).Group).String())
		Expect(code).To(Equal(5), out)
		var dry dryrun.DryRun
		Expect(json.Unmarshal([]byte(out), &dry)).To(Succeed())
		Expect(dry).To(And(HaveField("Verdict", decide.VerdictBlocked), HaveField("Reason", cleanupv1alpha1.BlockedDependentsUnreadable)))
		Expect(dry.Items).To(ContainElement(And(HaveField("Name", "w1"), HaveField("Action", decide.ActionDelete))))
		Expect(dry.UnreadDependents).To(ConsistOf(And(HaveField("Resource", "every kind of down.unr-down.example.com/v1"), HaveField("Reason", decide.UnreadUnavailable),
			HaveField("Anywhere", true), HaveField("Concerns", true), HaveField("Message", ContainSubstring("bring its API back")))))

		By("uninstalling: it waits, deleting nothing, then goes on by itself once the API is gone for good")
		s.deleteCSV(ctx)
		s.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedDependentsUnreadable)
		Expect(s.record(ctx).Status.Message).To(ContainSubstring("every kind of down.unr-down.example.com/v1"))
		Consistently(s.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+s.ns("a")+"/w1"))
		apiService := &unstructured.Unstructured{}
		apiService.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
		apiService.SetName("v1.down.unr-down.example.com")
		Expect(k8s.Delete(ctx, apiService)).To(Succeed())
		Eventually(func(ctx context.Context) error { _, err := s.getCSV(ctx); return err }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.record(ctx).Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Unread", BeEmpty()))))
	})

	It("goes on beside collectors nothing it destroys can own, waits on those it may destroy until they read, and plans and undoes beside them", func(ctx SpecContext) {
		startFakeVelero(ctx, "velero-unread", "Available")
		col := installCollectors(ctx)
		install := func(id string, backup bool) *scenario {
			s := newScenario(id)
			if backup {
				s.createPolicy(ctx, backupTo("velero-unread"))
			} else {
				s.createPolicy(ctx)
			}
			// Namespaced operands and no cluster object to delete: OLM deletes
			// an uninstalled CSV's cluster RBAC itself.
			s.create(ctx)
			s.operand(ctx, 0, s.ns("a"), "w1")
			s.waitFinalizer(ctx)
			return s
		}
		a := install("unr-a", true) // under backup; its w1 owns a collector
		b := install("unr-b", true) // under backup; nothing it destroys can own a collector
		e := install("unr-e", false)
		col.strand(ctx, map[collectorKey]client.Object{
			{"otel-unr", "c1"}:          nil, // nobody's, in its own namespace
			{a.ns("a"), "w1-collector"}: a.widget(ctx),
			{e.ns("a"), "w1-collector"}: e.widget(ctx),
		})
		// and one stored at v1beta1 beside them: no version's LIST reads them all
		c1b := &unstructured.Unstructured{}
		c1b.SetGroupVersionKind(schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollector"})
		c1b.SetNamespace("otel-unr")
		c1b.SetName("c1b")
		Expect(k8s.Create(ctx, c1b)).To(Succeed())
		Eventually(func(ctx context.Context) (string, error) {
			return cp.StoredAPIVersion(ctx, "opentelemetry.io/opentelemetrycollectors/otel-unr/c1b")
		}).WithContext(ctx).Should(Equal("opentelemetry.io/v1beta1"))
		for _, s := range []*scenario{a, b, e} {
			s.afterOperands()
		}
		By("restarting kube-controller-manager: its garbage collector starts while nobody can read the collectors, and never reads them")
		Expect(cp.RestartControllerManager()).To(Succeed())

		By("planning another operator's uninstall: csv-cleaner plan exits by its verdict and names the kind as a warning")
		// The rights of csv-cleaner's identity are foreseen for one that holds them.
		out, code := runCLI(ctx, "plan", "-n", e.install.Namespace, e.install.CSVName, "--service-account", planIdentity(ctx, e.id, e.crd(0).Group).String())
		GinkgoWriter.Println(out)
		Expect(code).To(BeZero())
		Expect(out).To(MatchRegexp(`Verdict:\s+Uninstall:`))
		Expect(out).To(MatchRegexp(`(?m)^NOT READ \(WARNING\)\s+REASON\s+WHERE\s+CONCERNS\s+WHY$`))
		Expect(out).To(MatchRegexp(`(?m)^opentelemetrycollectors\.opentelemetry\.io\s+StoreReadError\s+-\s+yes\s+1 object of opentelemetrycollectors\.opentelemetry\.io that the garbage collector deletes with the uninstall's deletions \(a-unr-e/w1-collector\) can be read only at the version they are stored at \(StoreReadError: .*conversion webhook for opentelemetry\.io/v1alpha1`))
		Expect(out).To(MatchRegexp(`(?m)^OpenTelemetryCollector\.opentelemetry\.io\s+a-unr-e\s+w1-collector`), "listed among the dependents")
		Expect(out).To(MatchRegexp(`(?m)^Delete\s+Widget\.unr-e\.example\.com\s+a-unr-e\s+w1\s+OwnedOperand$`))

		By("planning under a backup: the uninstall that may destroy a collector is Blocked, the other not")
		out, code = runCLI(ctx, "plan", "-n", a.install.Namespace, a.install.CSVName, "-o", "json", "--service-account", backupPlanIdentity(ctx, a.id, a.crd(0).Group).String())
		Expect(code).To(Equal(5), out)
		var dry dryrun.DryRun
		Expect(json.Unmarshal([]byte(out), &dry)).To(Succeed())
		Expect(dry).To(And(HaveField("Verdict", decide.VerdictBlocked), HaveField("Reason", cleanupv1alpha1.BlockedDependentsUnreadable)))
		Expect(dry.UnreadDependents).To(ConsistOf(And(HaveField("Resource", collectorsCRD), HaveField("Reason", decide.UnreadStorage),
			HaveField("Namespaces", BeEmpty()), HaveField("Stranded", 3), HaveField("Concerns", true),
			HaveField("Dependents", ConsistOf(HaveField("Name", "w1-collector"))), HaveField("Error", ContainSubstring("conversion webhook")))))
		Expect(dry.Dependents).To(ContainElement(And(HaveField("Namespace", a.ns("a")), HaveField("Name", "w1-collector"))))
		planB, err := csvcontroller.PlanUninstall(ctx, k8s, b.install.Key(), time.Now())
		Expect(err).NotTo(HaveOccurred())
		saB := backupPlanIdentity(ctx, b.id, b.crd(0).Group)
		Expect(dryrun.Foresee(ctx, k8s, disc, planB, &saB)).To(Succeed())
		Expect(planB.Verdict).To(Equal(decide.VerdictUninstall), planB.Message)
		Expect(planB.UnreadDependents).To(ConsistOf(And(HaveField("Concerns", false), HaveField("Stranded", 3),
			HaveField("Message", ContainSubstring("read them at the version they are stored at, and none is owned by what the uninstall destroys")))))
		Expect(planB.Backup).To(HaveValue(HaveField("Reason", "")))

		By("uninstalling all three")
		for _, s := range []*scenario{a, b, e} {
			s.deleteCSV(ctx)
		}
		b.csvGone(ctx)
		e.csvGone(ctx)
		rec := b.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Unread", ConsistOf(And(
			HaveField("Resource", collectorsCRD), HaveField("Reason", decide.UnreadStorage), HaveField("Namespaces", BeEmpty()),
			HaveField("Message", ContainSubstring("none is owned by what the uninstall destroys, so it goes on"))))))))
		Expect(b.eventReasons(ctx)).To(ContainElements("DependentsUnread", "BackupVerified"))
		Expect(e.remaining(ctx)).To(Equal([]string{"CRD " + e.crd(0).Name()}))

		By("the garbage collector deleting nothing it cannot read: the collector E's operand owned stays while nobody can read it")
		Consistently(func(ctx context.Context) bool { return stored(ctx, e.ns("a"), "w1-collector") }).WithContext(ctx).WithTimeout(3 * time.Second).Should(BeTrue())

		By("the uninstall that may destroy a collector waiting, deleting nothing, and saying why and what to do")
		a.waitPhase(ctx, "Blocked/"+cleanupv1alpha1.BlockedDependentsUnreadable)
		Expect(a.record(ctx).Status.Message).To(And(ContainSubstring(collectorsCRD), ContainSubstring(a.ns("a")+"/w1-collector"),
			ContainSubstring("conversion webhook for opentelemetry.io/v1alpha1"), ContainSubstring("set its spec.conversion to None"),
			ContainSubstring("goes on by itself once they can")))
		Consistently(a.remaining).WithContext(ctx).WithTimeout(time.Second).Should(ContainElements("CSV", "Widget "+a.ns("a")+"/w1"))

		By("setting the conversion to None, as an admin would: the garbage collector deletes what E's operand owned, and A goes on by itself")
		col.mend(ctx)
		Eventually(func(ctx context.Context) bool { return stored(ctx, e.ns("a"), "w1-collector") }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(BeFalse())
		Eventually(func(ctx context.Context) string { return a.phase(ctx) }).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Equal("Completed/"))
		rec = a.record(ctx)
		Expect(rec.Status.Backup).To(HaveValue(And(HaveField("Verified", true), HaveField("Dependents", BeEquivalentTo(1)), HaveField("Unread", BeEmpty()))))
		Eventually(func(ctx context.Context) bool { return stored(ctx, a.ns("a"), "w1-collector") }).WithContext(ctx).WithTimeout(time.Minute).Should(BeFalse())

		By("undoing while the collectors cannot be read again: the row says so, nothing else is missing, no Restore is made, and it exits 4")
		a.operand(ctx, 0, a.ns("a"), "w1") // back, as if the operator's reinstall had made it
		col.strand(ctx, map[collectorKey]client.Object{{"otel-unr", "c2"}: nil})
		out, code = runCLI(ctx, "undo", "-n", a.install.Namespace, a.install.CSVName, "--velero-namespace", "velero-unread", "-o", "json")
		Expect(code).To(Equal(4), out)
		var res undo.Result
		Expect(json.Unmarshal([]byte(out), &res)).To(Succeed())
		Expect(res.Restore).To(BeEmpty())
		Expect(res.Rows).To(ConsistOf(
			And(HaveField("Object.Kind", "Widget"), HaveField("State", undoplan.StatePresent)),
			And(HaveField("Object.Kind", "OpenTelemetryCollector"), HaveField("Object.Name", "w1-collector"), HaveField("State", undoplan.StateUnread),
				HaveField("Problem", And(ContainSubstring("conversion webhook"), ContainSubstring("run the undo again once the kind can be listed"))))))
		Expect(restoresIn(ctx, "velero-unread")).To(BeZero())
	})
}
