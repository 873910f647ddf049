package envtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// sampleFinalizer is the sample operator's finalizer on its resources (test/sampleoperator).
const sampleFinalizer = "sample.e2e.csv-cleaner.io/cleanup"

// extScenario is one ClusterExtension install: extension ext-<id>, install
// namespace ext-op-<id>, one namespaced CRD gadgets.<id>.example.com,
// resources in ext-a-<id> and ext-b-<id>.
type extScenario struct {
	id   string
	ext  fixtures.Extension
	objs fixtures.ExtensionObjects
	// lastResource is when the last resource was created.
	lastResource time.Time
}

func newExtScenario(id string) *extScenario {
	return &extScenario{id: id, ext: fixtures.Extension{
		Name:      "ext-" + id,
		Namespace: "ext-op-" + id,
		CRDs:      []fixtures.CRD{{Group: id + ".example.com", Kind: "Gadget", Plural: "gadgets"}},
		Labels:    map[string]string{"test": id},
	}}
}

func (s *extScenario) ns(prefix string) string { return "ext-" + prefix + "-" + s.id }

// createPolicy creates a CleanupPolicy that selects the scenario's extension (and no CSV).
func (s *extScenario) createPolicy(ctx context.Context, mutate ...func(*cleanupv1alpha1.CleanupPolicySpec)) {
	GinkgoHelper()
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "ext-" + s.id}}
	p.Spec.ClusterExtensionSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"test": s.id}}
	for _, m := range mutate {
		m(&p.Spec)
	}
	Expect(k8s.Create(ctx, p)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, p))).To(Succeed()) })
}

// create creates the extension as the Helm (or Boxcutter) applier leaves it,
// and waits for csv-cleaner's finalizer on it.
func (s *extScenario) create(ctx context.Context) {
	GinkgoHelper()
	var err error
	s.objs, err = s.ext.Create(ctx, k8s)
	Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{s.ns("a"), s.ns("b")} {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(ns)))).To(Succeed())
	}
	Eventually(s.finalizers).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))
}

// finalizers are the extension's finalizers; nil once it is gone.
func (s *extScenario) finalizers(ctx context.Context) []string {
	ext := &ocv1.ClusterExtension{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext); err != nil {
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading the ClusterExtension: %v", err)
		return nil
	}
	return ext.Finalizers
}

// resource creates an instance of the extension's CRD.
func (s *extScenario) resource(ctx context.Context, ns, name string) {
	GinkgoHelper()
	u := fixtures.Operand(s.ext.CRDs[0], ns, name)
	Expect(k8s.Create(ctx, u)).To(Succeed())
	s.lastResource = u.GetCreationTimestamp().Time
}

// afterResources waits for the second after the last resource's creation:
// the specs that call it stop csv-cleaner, or run operator-controller's
// part by hand, around the deletion, so that csv-cleaner may not see it
// begin and would keep an instance of its second as of unknown age
// (CreatedInDeletionSecond), a rule these specs do not test.
func (s *extScenario) afterResources() {
	fixtures.WaitNextSecond(s.lastResource)
}

// deleteAsOperatorController deletes the extension (background unless
// policy says otherwise) and then does what operator-controller does with
// its own finalizers: since v1.4.0 its reconcile returns early while
// another finalizer remains, and it removes its own once that is gone.
func (s *extScenario) deleteAsOperatorController(ctx context.Context, policy *metav1.DeletionPropagation) {
	GinkgoHelper()
	s.deleteExtension(ctx, policy)
	DeferCleanup(func(ctx SpecContext) { s.dropOLMFinalizers(ctx) })
	go func() {
		defer GinkgoRecover()
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return s.dropOLMFinalizers(ctx), nil
		})
	}()
}

// dropOLMFinalizers removes operator-controller's finalizers once csv-cleaner's is gone; it reports whether the extension is.
func (s *extScenario) dropOLMFinalizers(ctx context.Context) bool {
	ext := &ocv1.ClusterExtension{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext); err != nil {
		return apierrors.IsNotFound(err)
	}
	for _, f := range ext.Finalizers {
		if !strings.HasPrefix(f, "olm.operatorframework.io/") {
			return false
		}
	}
	base := ext.DeepCopy()
	ext.Finalizers = nil
	_ = k8s.Patch(ctx, ext, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	return false
}

// resources lists the instances of the extension's CRD as namespace/name; nil when the kind is gone.
func (s *extScenario) resources(ctx context.Context) []string {
	list := &unstructured.UnstructuredList{}
	gvk := s.ext.CRDs[0].GVK()
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(ctx, list); err != nil {
		return nil
	}
	var out []string
	for _, u := range list.Items {
		out = append(out, u.GetNamespace()+"/"+u.GetName())
	}
	return out
}

// deleteExtension deletes the extension with a propagation policy (nil: kubectl's default, background).
func (s *extScenario) deleteExtension(ctx context.Context, policy *metav1.DeletionPropagation) {
	GinkgoHelper()
	ext := &ocv1.ClusterExtension{ObjectMeta: metav1.ObjectMeta{Name: s.ext.Name}}
	opts := []client.DeleteOption{}
	if policy != nil {
		opts = append(opts, client.PropagationPolicy(*policy))
	}
	Expect(k8s.Delete(ctx, ext, opts...)).To(Succeed())
}

// record is the extension's ExtensionCleanup; nil while there is none.
func (s *extScenario) record(ctx context.Context) *cleanupv1alpha1.ExtensionCleanup {
	rec := &cleanupv1alpha1.ExtensionCleanup{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, rec); err != nil {
		return nil
	}
	return rec
}

func (s *extScenario) phase(ctx context.Context) string {
	if rec := s.record(ctx); rec != nil {
		return string(rec.Status.Phase)
	}
	return ""
}

// present reports whether obj is still there (and not being deleted).
func present(ctx context.Context, obj client.Object) bool {
	GinkgoHelper()
	cp := obj.DeepCopyObject().(client.Object)
	err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), cp)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	return cp.GetDeletionTimestamp().IsZero()
}

// extEventReasons are the reasons of the Events regarding the extension
// (recorded in the default namespace: it is cluster-scoped).
func (s *extScenario) extEventReasons(ctx context.Context) []string {
	GinkgoHelper()
	list := &eventsv1.EventList{}
	Expect(k8s.List(ctx, list, client.InNamespace(metav1.NamespaceDefault))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == ocv1.ClusterExtensionKind && e.Regarding.Name == s.ext.Name {
			out = append(out, e.Reason)
		}
	}
	return out
}

var (
	sampleOnce sync.Once
	sampleBin  string
	sampleErr  error
)

// startSampleOperator builds (once) and starts the sample operator as its
// own process, acting as the extension's ServiceAccount: what it may do
// is what the extension's ClusterRole grants, and the garbage collector's
// removal of that role would stop it.
func (s *extScenario) startSampleOperator() {
	GinkgoHelper()
	sampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "csv-cleaner-sample-")
		if err != nil {
			sampleErr = err
			return
		}
		sampleBin = filepath.Join(dir, "sample-operator")
		cmd := exec.Command("go", "build", "-o", sampleBin, "./test/sampleoperator")
		cmd.Dir = controlplane.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			sampleErr = err
			GinkgoWriter.Printf("building the sample operator: %s\n", out)
		}
	})
	Expect(sampleErr).NotTo(HaveOccurred())
	crd := s.ext.CRDs[0]
	p, err := controlplane.StartProcess("sample-operator-"+s.id, sampleBin, []string{
		"--kubeconfig=" + cp.Kubeconfig, "--group=" + crd.Group, "--kind=" + crd.Kind, "--as-service-account=" + s.ext.ServiceAccount(),
	}, nil, cp.LogDir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(p.Stop(10 * time.Second)).To(Succeed()) })
}
