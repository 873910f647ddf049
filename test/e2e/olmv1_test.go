//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// olmv1Catalog is the ClusterCatalog of the OLM v1 packages.
const olmv1Catalog = "e2e-olmv1"

// olmv1Package is a package OLM v1 installs: the sample operator with its
// own kind, Widget in <name>.e2e.example.com.
func olmv1Package(name string) fixtures.Package {
	return fixtures.Package{Name: name, Versions: []string{"1.0.0"},
		CRDs: []fixtures.CRD{{Group: name + ".e2e.example.com", Kind: "Widget", Plural: "widgets"}}}
}

var (
	v1Deleted  = olmv1Package("v1-deleted")
	v1Orphaned = olmv1Package("v1-orphaned")
	v1BackedUp = olmv1Package("v1-backed-up")
)

// extInstall is one install of an OLM v1 package as a ClusterExtension of
// the same name, into namespace <name>, with widgets in <name>-a and <name>-b.
type extInstall struct {
	pkg fixtures.Package
	ext *ocv1.ClusterExtension
	// lastWidget is the creationTimestamp of the last widget created.
	lastWidget metav1.Time
}

func (e *extInstall) name() string      { return e.pkg.Name }
func (e *extInstall) crd() fixtures.CRD { return e.pkg.CRDs[0] }
func (e *extInstall) ns(s string) string {
	return e.name() + "-" + s
}

// ownedBy selects what operator-controller applied for the extension (its owner labels).
func (e *extInstall) ownedBy() client.MatchingLabels {
	return client.MatchingLabels{olmv1.ExtensionOwnerKindLabel: ocv1.ClusterExtensionKind, olmv1.ExtensionOwnerNameLabel: e.name()}
}

// install creates the CleanupPolicy and installs the package as a
// ClusterExtension (installExtension), and waits until csv-cleaner has put
// its finalizer on it.
func (e *extInstall) install(ctx context.Context, policy func(*cleanupv1alpha1.CleanupPolicySpec)) {
	GinkgoHelper()
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: e.name()}}
	p.Spec.ClusterExtensionSelector = &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: e.name()}}
	policy(&p.Spec)
	Expect(kc.Client.Create(ctx, p)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, p))).To(Succeed()) })
	for _, ns := range []string{e.ns("a"), e.ns("b")} {
		Expect(kc.Client.Create(ctx, fixtures.Namespace(ns))).To(Succeed())
	}
	e.ext = installExtension(ctx, kc.Client, e.name(), e.name(), e.pkg.Name, e.pkg.Head())
	Eventually(e.finalizers).WithContext(ctx).Should(ContainElement(decide.DefaultFinalizer))
}

// installExtension creates namespace ns, a ServiceAccount there that may
// install anything (spec.serviceAccount) and ClusterExtension name for the
// package pkg, labelled for its CleanupPolicy, and waits until
// operator-controller reports bundle installed.
func installExtension(ctx context.Context, c client.Client, name, ns, pkg, bundle string) *ocv1.ClusterExtension {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, fixtures.Namespace(ns)))).To(Succeed())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "installer", Namespace: ns}}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, sa))).To(Succeed()) // a reinstall finds it
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-installer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, crb))).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(c.Delete(ctx, crb))).To(Succeed()) })
	ext := &ocv1.ClusterExtension{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{scenarioLabel: name}},
		Spec: ocv1.ClusterExtensionSpec{
			Namespace: ns,
			// v1.5.1 requires it; the v1.11.0 API csv-cleaner builds on marks it deprecated.
			ServiceAccount: ocv1.ServiceAccountReference{Name: sa.Name}, //nolint:staticcheck // see above
			Source: ocv1.SourceConfig{SourceType: ocv1.SourceTypeCatalog,
				Catalog: &ocv1.CatalogFilter{PackageName: pkg}},
		},
	}
	Expect(c.Create(ctx, ext)).To(Succeed())
	Eventually(func(g Gomega, ctx context.Context) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ext), ext)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(ext.Status.Conditions, ocv1.TypeInstalled)).To(BeTrue(),
			"conditions %v (see operator-controller.log)", ext.Status.Conditions)
		g.Expect(ext.Status.Install).NotTo(BeNil())
		g.Expect(ext.Status.Install.Bundle.Name).To(Equal(bundle))
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	return ext
}

// finalizers are the ClusterExtension's finalizers; nil once it is gone.
func (e *extInstall) finalizers(ctx context.Context) []string {
	ext := &ocv1.ClusterExtension{}
	if err := kc.Client.Get(ctx, client.ObjectKeyFromObject(e.ext), ext); err != nil {
		return nil
	}
	return ext.Finalizers
}

// widgets creates w1 and w2 in <name>-a and <name>-b and waits until the
// operator has put its finalizer on all four.
func (e *extInstall) widgets(ctx context.Context) {
	GinkgoHelper()
	for _, ns := range []string{e.ns("a"), e.ns("b")} {
		for _, n := range []string{"w1", "w2"} {
			w := fixtures.Operand(e.crd(), ns, n)
			Expect(kc.Client.Create(ctx, w)).To(Succeed())
			e.lastWidget = w.GetCreationTimestamp()
		}
	}
	Eventually(func(g Gomega, ctx context.Context) {
		list := e.widgetList()
		g.Expect(kc.Client.List(ctx, list)).To(Succeed())
		g.Expect(list.Items).To(HaveLen(4))
		for _, w := range list.Items {
			g.Expect(w.GetFinalizers()).To(ConsistOf(sampleFinalizer))
		}
	}).WithContext(ctx).Should(Succeed(), "the sample operator finalizes its widgets (see sample-operator-%s.log)", e.name())
}

// delete deletes the ClusterExtension with background propagation, as
// kubectl does, in a later second than the last widget's creation: a
// csv-cleaner that is stopped across the deletion cannot tell a resource of
// the deletion's own second from one created after it, and keeps it
// (CreatedInDeletionSecond).
func (e *extInstall) delete(ctx context.Context) {
	GinkgoHelper()
	fixtures.WaitNextSecond(e.lastWidget.Time)
	Expect(kc.Client.Delete(ctx, e.ext, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
}

func (e *extInstall) widgetList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(e.crd().GVK().GroupVersion().WithKind(e.crd().Kind + "List"))
	return list
}

// startOperator runs the sample operator as the ServiceAccount of its
// bundle, whose rights on widgets (a ClusterRole operator-controller made
// from the CSV's clusterPermissions) last only as long as the extension.
func (e *extInstall) startOperator() {
	GinkgoHelper()
	p, err := kc.SampleOperator("sample-operator-"+e.name(), e.crd().Group, e.crd().Kind,
		e.name()+"/"+fixtures.SampleServiceAccount)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = p.Stop(10 * time.Second) })
}

// record is csv-cleaner's ExtensionCleanup of the extension.
func (e *extInstall) record(ctx context.Context) (*cleanupv1alpha1.ExtensionCleanup, error) {
	rec := &cleanupv1alpha1.ExtensionCleanup{}
	return rec, kc.Client.Get(ctx, client.ObjectKey{Name: e.name()}, rec)
}

// snapshot is what of the install is there, as kubectl shows it: each
// object as "Kind name" ("Kind namespace/name"), with " (deleting)" while
// it has a deletionTimestamp.
func (e *extInstall) snapshot(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	add := func(kind string, o client.Object) {
		key := o.GetName()
		if o.GetNamespace() != "" {
			key = o.GetNamespace() + "/" + key
		}
		out[kind+" "+key] = o.GetDeletionTimestamp() != nil
	}
	ext := &ocv1.ClusterExtension{}
	if err := kc.Client.Get(ctx, client.ObjectKeyFromObject(e.ext), ext); err == nil {
		add("ClusterExtension", ext)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := kc.Client.Get(ctx, client.ObjectKey{Name: e.crd().Name()}, crd); err == nil {
		add("CRD", crd)
		list := e.widgetList()
		if err := kc.Client.List(ctx, list); err != nil && !apimeta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		for i := range list.Items {
			add("Widget", &list.Items[i])
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	lists := map[string]client.ObjectList{
		"Deployment": &appsv1.DeploymentList{}, "ServiceAccount": &corev1.ServiceAccountList{},
		"ClusterRole": &rbacv1.ClusterRoleList{}, "ClusterRoleBinding": &rbacv1.ClusterRoleBindingList{},
	}
	for kind, l := range lists {
		if err := kc.Client.List(ctx, l, e.ownedBy()); err != nil {
			return nil, err
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			add(kind, it.(client.Object))
		}
	}
	// The Helm release Secrets carry Helm's labels, not the owner labels:
	// only the controller ownerReference ties them to the extension.
	secrets := &corev1.SecretList{}
	if err := kc.Client.List(ctx, secrets, client.InNamespace(fixtures.ExtensionSystemNamespace)); err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		if ref := metav1.GetControllerOf(&secrets.Items[i]); ref != nil && ref.UID == e.ext.UID {
			add("Secret", &secrets.Items[i])
		}
	}
	return out, nil
}

// timeline watches the install (snapshot, every 50 ms) and notes when each
// object was first seen deleting and when gone.
type timeline struct {
	mu     sync.Mutex
	start  time.Time
	events []timelineEvent
	seen   map[string]bool
	cancel context.CancelFunc
	done   chan struct{}
}

type timelineEvent struct {
	at   time.Duration
	what string // "deleting" or "gone"
	obj  string
}

func (e *extInstall) watch(ctx context.Context) *timeline {
	GinkgoHelper()
	first, err := e.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &timeline{start: time.Now(), seen: first, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now, err := e.snapshot(ctx)
			if err != nil {
				continue
			}
			t.note(now)
		}
	}()
	return t
}

func (t *timeline) note(now map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := time.Since(t.start)
	for obj, deleting := range t.seen {
		d, there := now[obj]
		switch {
		case !there:
			t.events = append(t.events, timelineEvent{at, "gone", obj})
			delete(t.seen, obj)
		case d && !deleting:
			t.events = append(t.events, timelineEvent{at, "deleting", obj})
			t.seen[obj] = true
		}
	}
	for obj, d := range now {
		if _, ok := t.seen[obj]; !ok && !slices.ContainsFunc(t.events, func(ev timelineEvent) bool { return ev.obj == obj }) {
			t.seen[obj] = d
		}
	}
}

// stop ends the watch with a last look (a snapshot's reads are not one
// instant: the spec may have seen the end before the watch did), and
// returns the events in order, and reports them.
func (t *timeline) stop(ctx context.Context, e *extInstall, title string) []timelineEvent {
	GinkgoHelper()
	t.cancel()
	<-t.done
	now, err := e.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	t.note(now)
	t.mu.Lock()
	defer t.mu.Unlock()
	evs := slices.Clone(t.events)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%8.2fs  %-8s  %s\n", ev.at.Seconds(), ev.what, ev.obj)
	}
	AddReportEntry(title, b.String())
	GinkgoWriter.Printf("%s\n%s", title, b.String())
	return evs
}

// when is the time of the first event of obj of the given kind ("deleting" or "gone"); -1 if none.
func when(evs []timelineEvent, what, objPrefix string) time.Duration {
	for _, ev := range evs {
		if ev.what == what && strings.HasPrefix(ev.obj, objPrefix) {
			return ev.at
		}
	}
	return -1
}

// last is the time of the last event of the given kind on objects with the prefix; -1 if none.
func last(evs []timelineEvent, what, objPrefix string) time.Duration {
	at := time.Duration(-1)
	for _, ev := range evs {
		if ev.what == what && strings.HasPrefix(ev.obj, objPrefix) {
			at = ev.at
		}
	}
	return at
}

var _ = Describe("OLM v1: a ClusterExtension's uninstall, with real operator-controller", Ordered, func() {
	var olm *cluster.OLMv1

	BeforeAll(func(ctx SpecContext) {
		var err error
		olm, err = kc.StartOLMv1(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(olm.Stop)
		var pkgs []fixtures.Package
		for _, p := range []fixtures.Package{v1Deleted, v1Orphaned, v1BackedUp} {
			p.NodeName = kc.NodeName
			pkgs = append(pkgs, p)
		}
		_, err = olm.ServeCatalog(ctx, olmv1Catalog, pkgs...)
		Expect(err).NotTo(HaveOccurred())
		By("restarting csv-cleaner, which sets up its ClusterExtension controller when the API is served")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
	}, NodeTimeout(5*time.Minute))

	It("deletes the resources while the operator still runs and finalizes them, then lets the garbage collector remove the rest (crds: Delete)", func(ctx SpecContext) {
		e := &extInstall{pkg: v1Deleted}
		e.install(ctx, func(s *cleanupv1alpha1.CleanupPolicySpec) { s.CRDs = cleanupv1alpha1.Delete })

		By("operator-controller applied the bundle as the facts say: a controller ownerReference and the owner labels on the CRD")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: e.crd().Name()}, crd)).To(Succeed())
		Expect(crd.OwnerReferences).To(ContainElement(And(
			HaveField("UID", e.ext.UID), HaveField("Controller", HaveValue(BeTrue())), HaveField("BlockOwnerDeletion", HaveValue(BeTrue())))))
		Expect(crd.Labels).To(HaveKeyWithValue(olmv1.ExtensionOwnerNameLabel, e.name()))
		before, err := e.snapshot(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(before).To(HaveKey("Deployment " + e.name() + "/" + fixtures.SampleServiceAccount))
		Expect(before).To(HaveKey(HavePrefix("ClusterRole ")))
		Expect(before).To(HaveKey(HavePrefix("Secret "+fixtures.ExtensionSystemNamespace+"/")), "the Helm release Secret")

		secrets := &corev1.SecretList{}
		Expect(kc.Client.List(ctx, secrets, client.InNamespace(fixtures.ExtensionSystemNamespace))).To(Succeed())
		for _, s := range secrets.Items {
			GinkgoWriter.Printf("Release Secret %s: type %s, labels %v, ownerReferences %v\n", s.Name, s.Type, s.Labels, s.OwnerReferences)
		}

		e.startOperator()
		e.widgets(ctx)
		Expect(e.finalizers(ctx)).To(ContainElements(decide.DefaultFinalizer, "olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-contentmanager-cache"))

		By("scaling csv-cleaner to zero, then deleting the ClusterExtension (background propagation)")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		t := e.watch(ctx)
		e.delete(ctx)
		By("csv-cleaner's finalizer holds the extension: nothing is deleted while it is stopped")
		Consistently(func(ctx context.Context) (map[string]bool, error) { return e.snapshot(ctx) }).
			WithContext(ctx).WithTimeout(5 * time.Second).Should(And(
			HaveKeyWithValue("ClusterExtension "+e.name(), true),
			HaveKeyWithValue("CRD "+e.crd().Name(), false),
			HaveKeyWithValue("Deployment "+e.name()+"/"+fixtures.SampleServiceAccount, false),
			HaveKeyWithValue("Widget "+e.ns("a")+"/w1", false)))

		By("scaling csv-cleaner up: it resumes the uninstall")
		Expect(cleaner.Scale(ctx, 1)).To(Succeed())
		Eventually(func(ctx context.Context) (map[string]bool, error) { return e.snapshot(ctx) }).
			WithContext(ctx).WithTimeout(2*time.Minute).Should(BeEmpty(), "everything of the install is removed")
		evs := t.stop(ctx, e, "OLM v1 uninstall, crds: Delete (seconds after the delete)")

		By("every widget went while the operator, its rights and the CRD were still there")
		lastWidget := last(evs, "gone", "Widget ")
		Expect(lastWidget).To(BeNumerically(">", 0))
		for _, obj := range []string{"CRD ", "Deployment ", "ClusterRole ", "ClusterRoleBinding ", "ServiceAccount ", "Secret "} {
			Expect(when(evs, "deleting", obj)).To(SatisfyAny(Equal(time.Duration(-1)), BeNumerically(">", lastWidget)), "%s deleting", obj)
			Expect(when(evs, "gone", obj)).To(BeNumerically(">", lastWidget), "%s gone", obj)
		}
		Expect(when(evs, "gone", "ClusterExtension ")).To(BeNumerically(">", lastWidget), "csv-cleaner released the extension after the widgets")
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: e.name()}, &cleanupv1alpha1.ExtensionCleanup{})).To(Succeed())
		rec, err := e.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted), "record %+v", rec.Status)
	})

	It("keeps the CRD and the resources, without the extension's ownerReference, when the policy orphans them (operator-controller#775)", func(ctx SpecContext) {
		e := &extInstall{pkg: v1Orphaned}
		e.install(ctx, func(s *cleanupv1alpha1.CleanupPolicySpec) {
			s.Operands = cleanupv1alpha1.Orphan
			s.CRDs = cleanupv1alpha1.Orphan
		})
		e.startOperator()
		e.widgets(ctx)
		t := e.watch(ctx)
		e.delete(ctx)
		want := map[string]bool{"CRD " + e.crd().Name(): false}
		for _, ns := range []string{e.ns("a"), e.ns("b")} {
			want["Widget "+ns+"/w1"], want["Widget "+ns+"/w2"] = false, false
		}
		Eventually(func(ctx context.Context) (map[string]bool, error) { return e.snapshot(ctx) }).
			WithContext(ctx).WithTimeout(2*time.Minute).Should(Equal(want), "the operator, its RBAC and the release go; the CRD and the widgets stay")
		t.stop(ctx, e, "OLM v1 uninstall, operands and crds: Orphan (seconds after the delete)")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: e.crd().Name()}, crd)).To(Succeed())
		Expect(crd.OwnerReferences).To(BeEmpty())
		Expect(crd.Labels).NotTo(HaveKey(olmv1.ExtensionOwnerNameLabel))
		Expect(crd.Labels).NotTo(HaveKey(olmv1.ExtensionOwnerKindLabel))
		rec, err := e.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted), "record %+v", rec.Status)
	})

	It("backs up a ClusterExtension's uninstall with real Velero (crds: Delete), dependents and volumes' data too; csv-cleaner undo brings back exactly that, the CRD with it, before the ClusterExtension is installed again", func(ctx SpecContext) {
		e := &extInstall{pkg: v1BackedUp}
		e.install(ctx, func(s *cleanupv1alpha1.CleanupPolicySpec) {
			s.CRDs = cleanupv1alpha1.Delete
			withVelero(s)
		})
		e.startOperator()
		csi := startCSI(ctx)
		gcWatches(ctx, e.crd(), e.ns("a"))
		specs, held := map[string]map[string]any{}, map[string]data{}
		for i, ns := range []string{e.ns("a"), e.ns("b")} {
			w := fixtures.Operand(e.crd(), ns, "db")
			spec := map[string]any{"replicas": int64(i + 1), "storage": fmt.Sprintf("%dGi", 5*(i+1))}
			w.Object["spec"] = spec
			Expect(kc.Client.Create(ctx, w)).To(Succeed())
			e.lastWidget = w.GetCreationTimestamp()
			specs[ns+"/db"], held[ns+"/db"] = spec, withDependents(ctx, csi, w)
		}
		startVeleroCSI(ctx)

		e.delete(ctx)
		Eventually(func(ctx context.Context) (map[string]bool, error) { return e.snapshot(ctx) }).
			WithContext(ctx).WithTimeout(2*time.Minute).Should(BeEmpty(), "everything of the install is removed, the CRD with it")
		for key := range specs {
			ns, name, _ := strings.Cut(key, "/")
			Eventually(func(ctx context.Context) bool { return dependentsGone(ctx, ns, name) }).WithContext(ctx).Should(BeTrue(), "the garbage collector deletes the dependents of %s", key)
		}
		rec, err := e.record(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted), "record %+v", rec.Status)
		Expect(rec.Status.Backup).NotTo(BeNil())
		st := *rec.Status.Backup
		// the two resources and the CRD the garbage collector deletes with the extension; their Secrets, ConfigMaps and claims
		Expect(st).To(And(HaveField("Verified", true), HaveField("Phase", "Completed"), HaveField("Planned", BeEquivalentTo(3)),
			HaveField("Dependents", BeEquivalentTo(6)), HaveField("Volumes", BeEquivalentTo(2))))
		Expect(rec.Status.Message).To(ContainSubstring("csv-cleaner undo clusterextension " + e.name()))

		By("undoing before the ClusterExtension is installed again: the CRD the garbage collector deleted comes back with the widgets, their Secrets, ConfigMaps and claims")
		began := time.Now()
		out, code := undo(ctx, "clusterextension", e.name())
		AddReportEntry("csv-cleaner undo clusterextension", fmt.Sprintf("exit %d in %s", code, time.Since(began).Round(time.Millisecond)))
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("9 restored, 0 present already, 0 missing"))
		for key, spec := range specs {
			ns, name, _ := strings.Cut(key, "/")
			w := fixtures.Operand(e.crd(), ns, name)
			Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed(), "%s is back", key)
			Expect(w.Object["spec"]).To(Equal(spec), "%s has its spec back", key)
			got := dataOf(ctx, csi, ns, name)
			Expect(got).To(Equal(held[key]), "the Secret, ConfigMap and volume of %s hold what they held", key)
		}

		By("installing the ClusterExtension again: operator-controller takes the restored CRD back into its release")
		e.ext = installExtension(ctx, kc.Client, e.name(), e.name(), e.pkg.Name, e.pkg.Head())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(kc.Client.Get(ctx, client.ObjectKey{Name: e.crd().Name()}, crd)).To(Succeed())
		Expect(crd.OwnerReferences).To(ContainElement(HaveField("UID", e.ext.UID)), "the CRD is the new ClusterExtension's")
		for key := range specs {
			ns, name, _ := strings.Cut(key, "/")
			Expect(dataOf(ctx, csi, ns, name)).To(Equal(held[key]), "%s's data stays", key)
		}

		By("operator-controller puts a ClusterExtension's Deployment back when it is scaled to zero: why the undo runs before its install")
		deployments := &appsv1.DeploymentList{}
		Expect(kc.Client.List(ctx, deployments, e.ownedBy())).To(Succeed())
		Expect(deployments.Items).NotTo(BeEmpty())
		d := &deployments.Items[0]
		base := d.DeepCopy()
		zero := int32(0)
		d.Spec.Replicas = &zero
		scaled := time.Now()
		Expect(kc.Client.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
		Eventually(func(g Gomega, ctx context.Context) {
			g.Expect(kc.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			g.Expect(d.Spec.Replicas).To(HaveValue(BeNumerically(">", 0)))
		}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "operator-controller scales the Deployment back up")
		AddReportEntry("operator-controller and a Deployment scaled to zero", fmt.Sprintf("Deployment %s/%s scaled back to %d replica(s) %s after it was scaled to zero",
			d.Namespace, d.Name, *d.Spec.Replicas, time.Since(scaled).Round(10*time.Millisecond)))

		n := restores(ctx, st.Name)
		out, code = undo(ctx, "clusterextension", e.name())
		Expect(code).To(BeZero(), out)
		Expect(restores(ctx, st.Name)).To(Equal(n))
	})
})
