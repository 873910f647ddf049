//go:build e2e

package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	upBusy = samplePackage("up-busy")
	upLive = samplePackage("up-live")
)

// The next version of csv-cleaner that the upgrade scenario's catalog offers.
const (
	nextVersion    = "0.2.0"
	nextDeployment = "csv-cleaner-v2"
)

var _ = Describe("csv-cleaner upgraded through its catalog", func() {
	It("keeps every finalizer through an upgrade that renames its Deployment, and completes an uninstall begun before it", func(ctx SpecContext) {
		if !kc.Local() {
			Skip("this scenario installs csv-cleaner itself from a catalog: it runs on the local cluster only")
		}
		root := controlplane.RepoRoot()
		v1Name := bundleCSVName(filepath.Join(root, "bundle", "manifests", "csv-cleaner.clusterserviceversion.yaml"))
		v2Name := "csv-cleaner.v" + nextVersion
		sub := cluster.Subscription{Namespace: "csv-cleaner-up", Package: fixtures.Package{Name: "csv-cleaner"}, Catalog: "csv-cleaner-up",
			Targets: []string{""}, StartingCSV: v1Name, Manual: true}
		v1, v2 := sub.CSVKey(v1Name), sub.CSVKey(v2Name)

		By("serving catalog/ with a next version that replaces it and renames the Deployment")
		dir := filepath.Join(kc.LogDir, "catalog-csv-cleaner-up")
		Expect(writeUpgradeCatalog(filepath.Join(root, "catalog", "csv-cleaner", "index.yaml"), dir, v1Name)).To(Succeed())
		_, err := kc.ServeCatalogDir(ctx, sub.Catalog, dir, "csv-cleaner, two versions")
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.Client.Create(ctx, fixtures.Namespace(sub.Namespace))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// Another install of csv-cleaner's APIs must find no OperatorGroup providing them.
			Expect(client.IgnoreNotFound(kc.Client.Delete(ctx, sub.OperatorGroup()))).To(Succeed())
		})
		Expect(kc.Subscribe(ctx, sub)).To(Succeed())
		Expect(kc.ApproveInstallPlan(ctx, sub, v1Name)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, v1, operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.WaitForInstallPlanComplete(ctx, sub.Namespace, v1Name)).To(Succeed())

		By("running v1 as OLM's ServiceAccount, with the pod environment OLM sets")
		Expect(cleaner.Scale(ctx, 0)).To(Succeed())
		kubeconfig, err := kc.KubeconfigAs(types.NamespacedName{Namespace: sub.Namespace, Name: "csv-cleaner"})
		Expect(err).NotTo(HaveOccurred())
		old := cleaner.As("csv-cleaner-up-v1", kubeconfig, sub.Namespace, "POD_NAMESPACE="+sub.Namespace, "OPERATOR_CONDITION_NAME="+v1Name)
		next := cleaner.As("csv-cleaner-up-v2", kubeconfig, sub.Namespace, "POD_NAMESPACE="+sub.Namespace, "OPERATOR_CONDITION_NAME="+v2Name)
		DeferCleanup(func(ctx SpecContext) {
			Expect(old.Scale(ctx, 0)).To(Succeed())
			Expect(next.Scale(ctx, 0)).To(Succeed())
		})
		Expect(old.Scale(ctx, 1)).To(Succeed())

		By("installing two operators: one to uninstall during the upgrade, one that stays")
		busy, live := newInstall(upBusy), newInstall(upLive)
		busy.create(ctx)
		live.create(ctx)
		busy.widget(ctx, busy.ns("a"), "w1", operandHold)
		DeferCleanup(func(ctx SpecContext) { releaseWidget(ctx, busy, busy.ns("a"), "w1") })
		Eventually(func(ctx context.Context) []string { return heldRBAC(ctx, live.csvKey()) }).WithContext(ctx).Should(HaveLen(2))
		Eventually(func(ctx context.Context) []string { return heldRBAC(ctx, busy.csvKey()) }).WithContext(ctx).Should(HaveLen(2))
		watch := watchHeld(ctx, busy, live)

		By("uninstalling the first operator: its widget waits on a finalizer nobody removes yet")
		busy.uninstall(ctx)
		Eventually(func(ctx context.Context) string { return busy.describe(ctx) }).WithContext(ctx).Should(ContainSubstring(operandHold))

		By("approving v2: OLM installs it beside v1 and replaces v1")
		phases := watchPhases(ctx, v1)
		Expect(kc.ApproveInstallPlan(ctx, sub, v2Name)).To(Succeed())
		Expect(next.Scale(ctx, 1)).To(Succeed())
		_, err = kc.WaitForCSVPhase(ctx, v2, operatorsv1alpha1.CSVPhaseSucceeded)
		Expect(err).NotTo(HaveOccurred())
		Expect(kc.Client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: nextDeployment}, &appsv1.Deployment{})).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, v1, &operatorsv1alpha1.ClusterServiceVersion{})
		}).
			WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "v1's CSV goes: csv-cleaner releases it at once")
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: "csv-cleaner"}, &appsv1.Deployment{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the garbage collector deletes v1's Deployment with its CSV")
		goneAt := time.Now()
		GinkgoWriter.Printf("v1's CSV phases, as seen: %s; v1's Deployment gone %s\n", phases.String(), goneAt.Format("15:04:05.000"))

		By("stopping v1's replica, as the kubelet does once its Deployment is gone")
		Expect(old.Scale(ctx, 0)).To(Succeed())
		Expect(busy.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))

		By("letting the widget go: v2 completes the uninstall v1 began")
		released := time.Now()
		releaseWidget(ctx, busy, busy.ns("a"), "w1")
		busy.waitCSVGone(ctx)
		Expect(busy.phase(ctx)).To(Equal("Completed/"), busy.describe(ctx))
		Eventually(func(ctx context.Context) []string { return busy.remaining(ctx) }).WithContext(ctx).
			Should(ConsistOf("CRD " + busy.crd().Name()))

		By("finding that no managed CSV or RBAC ever lost a finalizer of csv-cleaner's while it was needed")
		Expect(watch.lost(busy, released)).To(BeEmpty())
		Expect(watch.lost(live, time.Now())).To(BeEmpty())
		Expect(watch.samples()).To(BeNumerically(">", 10))
		Expect(live.finalizers(ctx)).To(ContainElement(decide.DefaultFinalizer))
		Expect(heldRBAC(ctx, live.csvKey())).To(HaveLen(2))
		Expect(phases.seen()).To(ContainElement(string(operatorsv1alpha1.CSVPhaseReplacing)), phases.String())
		logs, err := next.Logs()
		Expect(err).NotTo(HaveOccurred())
		// Leader election may be refused its lease once, at the moment v1's
		// CSV goes and the garbage collector removes v1's namespaced RBAC;
		// it retries. Nothing else may be refused.
		for _, line := range strings.Split(logs, "\n") {
			if !strings.Contains(line, `"logger":"leaderelection"`) {
				Expect(strings.ToLower(line)).NotTo(ContainSubstring("forbidden"), "v2 runs with the RBAC OLM made for it")
			}
		}

		By("uninstalling csv-cleaner v2 through OLM, which leaves no finalizer")
		Expect(kc.Client.Delete(ctx, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: sub.Namespace, Name: "csv-cleaner"}})).To(Succeed())
		Expect(kc.Client.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: v2.Namespace, Name: v2.Name}})).To(Succeed())
		Eventually(func(ctx context.Context) error {
			return kc.Client.Get(ctx, v2, &operatorsv1alpha1.ClusterServiceVersion{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), func() string { return ownUninstallState(ctx, v2, next) })
		Expect(finalizersLeft(ctx)).To(BeEmpty())
	})
})

// operandHold is a finalizer the tests put on widgets, which only the test removes.
const operandHold = "e2e.csv-cleaner.io/hold"

// releaseWidget removes every finalizer from a widget.
func releaseWidget(ctx context.Context, in *install, ns, name string) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error {
		w := fixtures.Operand(in.crd(), ns, name)
		if err := kc.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return client.IgnoreNotFound(err)
		}
		w.SetFinalizers(nil)
		return kc.Client.Update(ctx, w)
	}).WithContext(ctx).Should(Succeed())
}

// heldWatch samples, every 50 ms, the finalizers of installs' CSVs and RBAC.
type heldWatch struct {
	mu  sync.Mutex
	log []heldSample
}

type heldSample struct {
	at         time.Time
	csv        types.NamespacedName
	csvHeld    bool
	rbacHeld   int
	csvPresent bool
}

func watchHeld(ctx context.Context, installs ...*install) *heldWatch {
	h := &heldWatch{}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	go func() {
		defer GinkgoRecover()
		for wctx.Err() == nil {
			for _, in := range installs {
				csv := &metav1.PartialObjectMetadata{}
				csv.SetGroupVersionKind(operatorsv1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersion"))
				err := kc.Client.Get(wctx, in.csvKey(), csv)
				if err != nil && !apierrors.IsNotFound(err) {
					continue
				}
				present := err == nil
				held, err := listHeldRBAC(wctx, in.csvKey())
				if err != nil {
					continue
				}
				s := heldSample{at: time.Now(), csv: in.csvKey(), csvPresent: present,
					csvHeld: slices.Contains(csv.Finalizers, decide.DefaultFinalizer), rbacHeld: len(held)}
				h.mu.Lock()
				h.log = append(h.log, s)
				h.mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return h
}

// lost lists the samples, before until, in which the install's CSV or its
// two held RBAC objects lacked csv-cleaner's finalizers.
func (h *heldWatch) lost(in *install, until time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.log {
		if s.csv == in.csvKey() && s.at.Before(until) && (!s.csvPresent || !s.csvHeld || s.rbacHeld != 2) {
			out = append(out, fmt.Sprintf("%s at %s: CSV present %v, held %v; RBAC held %d", s.csv, s.at.Format("15:04:05.000"), s.csvPresent, s.csvHeld, s.rbacHeld))
		}
	}
	return out
}

func (h *heldWatch) samples() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.log)
}

// phaseLog records the phases and reasons a CSV goes through, and when.
type phaseLog struct {
	mu      sync.Mutex
	entries []string
	phases  []string
}

func watchPhases(ctx context.Context, key types.NamespacedName) *phaseLog {
	l := &phaseLog{}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	go func() {
		last := ""
		for wctx.Err() == nil {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			now := ""
			if err := kc.Client.Get(wctx, key, csv); apierrors.IsNotFound(err) {
				now = "gone"
			} else if err == nil {
				now = fmt.Sprintf("%s/%s", csv.Status.Phase, csv.Status.Reason)
				if !csv.DeletionTimestamp.IsZero() {
					now += " (deleting)"
				}
			}
			if now != "" && now != last {
				l.mu.Lock()
				l.entries = append(l.entries, now+" at "+time.Now().Format("15:04:05.000"))
				l.phases = append(l.phases, string(csv.Status.Phase))
				l.mu.Unlock()
				last = now
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return l
}

func (l *phaseLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.entries, ", ")
}

func (l *phaseLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.phases)
}

// writeUpgradeCatalog writes into dir the file-based catalog of index (the
// one make catalog writes) with a second bundle, csv-cleaner.v<nextVersion>,
// that replaces first and names its Deployment nextDeployment: what a
// release of csv-cleaner that renames its Deployment would publish.
func writeUpgradeCatalog(index, dir, first string) error {
	raw, err := os.ReadFile(index)
	if err != nil {
		return fmt.Errorf("reading the catalog: %w", err)
	}
	var blobs []map[string]any
	var next map[string]any
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		blob := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &blob); err != nil {
			return fmt.Errorf("parsing the catalog: %w", err)
		}
		switch blob["schema"] {
		case "olm.channel":
			entries, _ := blob["entries"].([]any)
			blob["entries"] = append(entries, map[string]any{"name": "csv-cleaner.v" + nextVersion, "replaces": first})
		case "olm.bundle":
			if next, err = nextBundle(blob, first); err != nil {
				return err
			}
		}
		blobs = append(blobs, blob)
	}
	if next == nil {
		return fmt.Errorf("the catalog %s has no bundle", index)
	}
	pdir := filepath.Join(dir, "csv-cleaner")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, blob := range append(blobs, next) {
		if err := enc.Encode(blob); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(pdir, "catalog.json"), []byte(b.String()), 0o644)
}

// nextBundle is a copy of the bundle blob as version nextVersion.
func nextBundle(blob map[string]any, first string) (map[string]any, error) {
	raw, err := json.Marshal(blob)
	if err != nil {
		return nil, err
	}
	next := map[string]any{}
	if err := json.Unmarshal(raw, &next); err != nil {
		return nil, err
	}
	next["name"] = "csv-cleaner.v" + nextVersion
	props, _ := next["properties"].([]any)
	for _, p := range props {
		prop, _ := p.(map[string]any)
		value, _ := prop["value"].(map[string]any)
		switch prop["type"] {
		case "olm.package":
			value["version"] = nextVersion
		case "olm.bundle.object":
			data, err := base64.StdEncoding.DecodeString(value["data"].(string))
			if err != nil {
				return nil, err
			}
			obj := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := json.Unmarshal(data, obj); err != nil || obj.Kind != operatorsv1alpha1.ClusterServiceVersionKind {
				continue
			}
			if data, err = nextCSV(data, first); err != nil {
				return nil, err
			}
			value["data"] = base64.StdEncoding.EncodeToString(data)
		}
	}
	return next, nil
}

// nextCSV edits the bundle's CSV into the next version's.
func nextCSV(data []byte, first string) ([]byte, error) {
	csv := map[string]any{}
	if err := json.Unmarshal(data, &csv); err != nil {
		return nil, err
	}
	csv["metadata"].(map[string]any)["name"] = "csv-cleaner.v" + nextVersion
	spec := csv["spec"].(map[string]any)
	spec["version"] = nextVersion
	spec["replaces"] = first
	deps := spec["install"].(map[string]any)["spec"].(map[string]any)["deployments"].([]any)
	deps[0].(map[string]any)["name"] = nextDeployment
	return json.Marshal(csv)
}
