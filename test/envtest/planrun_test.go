package envtest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// deleteLog records the DELETE requests csv-cleaner sends, as
// "<resource> <namespace>/<name>", from its HTTP transport.
type deleteLog struct {
	mu    sync.Mutex
	paths []string
}

type loggingTransport struct {
	next http.RoundTripper
	log  *deleteLog
}

func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodDelete {
		t.log.mu.Lock()
		t.log.paths = append(t.log.paths, deleteTarget(req.URL.Path))
		t.log.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

// deleteTarget turns /api[s]/<group>/<version>[/namespaces/<ns>]/<resource>/<name> into "<resource> <ns>/<name>".
func deleteTarget(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if parts[0] == "api" {
		parts = parts[2:]
	} else {
		parts = parts[3:]
	}
	ns := ""
	if len(parts) == 4 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
	}
	if len(parts) != 2 {
		return p
	}
	return parts[0] + " " + path(ns, parts[1])
}

func (l *deleteLog) containing(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths {
		if strings.Contains(p, id) {
			out = append(out, p)
		}
	}
	return out
}

// itemTarget names a plan item as deleteTarget names a request: every kind
// here is plural with an "s".
func itemTarget(it decide.Item) string {
	kind, _, _ := strings.Cut(it.Kind, ".")
	return strings.ToLower(kind) + "s " + path(it.Namespace, it.Name)
}

// planRunCase is a cluster state, made before (csv-cleaner running) and
// after (stopped) the CSV's deletion.
type planRunCase struct {
	policy func(*cleanupv1alpha1.CleanupPolicySpec)
	before func(ctx context.Context, s *scenario, csv *operatorsv1alpha1.ClusterServiceVersion)
	after  func(ctx context.Context, s *scenario)
}

var _ = Describe("csv-cleaner plan and the uninstall", func() {
	DescribeTable("the items the plan prints are exactly the deletes the run issues and the objects it keeps",
		func(ctx SpecContext, id string, c planRunCase) {
			s := newScenario(id)
			s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) {
				p.CRDs = cleanupv1alpha1.Delete
				if c.policy != nil {
					c.policy(p)
				}
			})
			csv := s.create(ctx)
			s.operand(ctx, 0, s.ns("a"), "w1")
			s.operand(ctx, 0, s.ns("b"), "w2")
			s.operand(ctx, 0, s.ns("c"), "w3") // outside the targets
			s.ownedRBAC(ctx, "role")
			s.waitFinalizer(ctx)
			if c.before != nil {
				c.before(ctx, s, csv)
			}

			By("deleting the CSV while csv-cleaner is stopped, then planning")
			stopManager()
			DeferCleanup(func() {
				stopManager()
				startManager()
			})
			s.deleteCSV(ctx)
			if c.after != nil {
				c.after(ctx, s)
			}
			dry, err := csvcontroller.PlanUninstall(ctx, k8s, s.install.Key(), time.Now())
			Expect(err).NotTo(HaveOccurred())
			GinkgoWriter.Printf("plan: %s (%s) %s\n", dry.Verdict, dry.Reason, dry.Message)
			for _, it := range dry.Items {
				GinkgoWriter.Printf("  %+v\n", it)
			}

			By("running the uninstall, every DELETE request recorded")
			log := &deleteLog{}
			cfg := rest.CopyConfig(cp.Config)
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return loggingTransport{next: rt, log: log} }
			startManagerAs(cfg)
			if dry.Verdict == decide.VerdictBlocked {
				s.waitPhase(ctx, "Blocked/"+dry.Reason)
			} else {
				s.csvGone(ctx)
			}
			stopManager()

			operandKind := s.crd(0).Kind + "." + s.crd(0).Group
			var wantDeletes []string
			var wantKept, wantLeft []decide.Item
			for _, it := range dry.Items {
				switch {
				case it.Action == decide.ActionDelete && it.Reason != decide.DeleteTerminating && it.Reason != decide.DeleteRemoveFinalizers:
					wantDeletes = append(wantDeletes, itemTarget(it))
				case it.Action == decide.ActionKeep:
					wantLeft = append(wantLeft, it)
					// The record names the kept operands and CRDs; cluster objects
					// a policy orphans are kept by not being looked at.
					if it.Kind == operandKind || it.Kind == decide.CRDKind {
						wantKept = append(wantKept, it)
					}
				}
			}
			Expect(log.containing(id)).To(ConsistOf(wantDeletes), "the run's DELETE requests")
			rec := s.record(ctx)
			var gotKept []decide.Item
			for _, k := range rec.Status.Kept {
				gotKept = append(gotKept, decide.Item{Action: decide.ActionKeep, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Reason: k.Reason})
			}
			Expect(gotKept).To(ConsistOf(wantKept), "the record's status.kept")
			for _, it := range wantLeft {
				Expect(exists(ctx, s, it)).To(BeTrue(), "kept %+v still exists", it)
			}
		},
		Entry("the safety rules: targets, another owner's namespace, created after the deletion", "pr-rules", planRunCase{
			before: func(ctx context.Context, s *scenario, _ *operatorsv1alpha1.ClusterServiceVersion) {
				other := newScenario("pr-rules-other")
				other.install.CRDs = s.install.CRDs
				other.install.Targets = []string{s.ns("b")}
				other.create(ctx)
			},
			after: func(ctx context.Context, s *scenario) {
				time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
				s.operand(ctx, 0, s.ns("a"), "late")
			},
		}),
		Entry("a CRD without OLM's provenance", "pr-unproven", planRunCase{
			before: func(ctx context.Context, s *scenario, _ *operatorsv1alpha1.ClusterServiceVersion) {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				Expect(k8s.Get(ctx, client.ObjectKey{Name: s.crd(0).Name()}, crd)).To(Succeed())
				crd.Annotations = nil
				Expect(k8s.Update(ctx, crd)).To(Succeed())
			},
		}),
		Entry("operands: Orphan with a malformed owned CRD", "pr-orphan", planRunCase{
			policy: func(p *cleanupv1alpha1.CleanupPolicySpec) { p.Operands = cleanupv1alpha1.Orphan },
			before: func(ctx context.Context, _ *scenario, csv *operatorsv1alpha1.ClusterServiceVersion) {
				addOwned(ctx, csv, "NotA_CRD", "Bad")
			},
		}),
		Entry("the console's opt-out annotation, webhooks orphaned", "pr-optout", planRunCase{
			policy: func(p *cleanupv1alpha1.CleanupPolicySpec) { p.ClusterRBAC = cleanupv1alpha1.Orphan },
			before: func(ctx context.Context, _ *scenario, csv *operatorsv1alpha1.ClusterServiceVersion) {
				base := csv.DeepCopy()
				metav1.SetMetaDataAnnotation(&csv.ObjectMeta, decide.OptOutAnnotation, "true")
				Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
			},
		}),
		Entry("bad input: a malformed target namespace list", "pr-badinput", planRunCase{
			before: func(ctx context.Context, _ *scenario, csv *operatorsv1alpha1.ClusterServiceVersion) {
				base := csv.DeepCopy()
				metav1.SetMetaDataAnnotation(&csv.ObjectMeta, "olm.targetNamespaces", "a-pr-badinput,,b-pr-badinput")
				Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
			},
		}),
		Entry("past operandTimeout with onTimeout: Orphan, an operand held by a finalizer", "pr-timeout", planRunCase{
			policy: func(p *cleanupv1alpha1.CleanupPolicySpec) {
				p.OperandTimeout = &metav1.Duration{Duration: time.Second}
				p.OnTimeout = cleanupv1alpha1.TimeoutOrphan
			},
			before: func(ctx context.Context, s *scenario, _ *operatorsv1alpha1.ClusterServiceVersion) {
				held := s.operand(ctx, 0, s.ns("b"), "held", "example.com/hold")
				DeferCleanup(func(ctx SpecContext) { releaseOperand(ctx, s, held) })
			},
			after: func(ctx context.Context, s *scenario) {
				held := fixtures.Operand(s.crd(0), s.ns("b"), "held")
				Expect(k8s.Delete(ctx, held)).To(Succeed()) // terminating, held by its finalizer
				time.Sleep(1100 * time.Millisecond)         // past operandTimeout
			},
		}),
	)
})

// releaseOperand removes an operand's finalizers, so that it goes.
func releaseOperand(ctx context.Context, s *scenario, obj *unstructured.Unstructured) {
	GinkgoHelper()
	Eventually(func(g Gomega, ctx context.Context) {
		cur := fixtures.Operand(s.crd(0), obj.GetNamespace(), obj.GetName())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cur), cur); err != nil {
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			return
		}
		cur.SetFinalizers(nil)
		g.Expect(k8s.Update(ctx, cur)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}

// exists reports whether the object a plan item names exists.
func exists(ctx context.Context, s *scenario, it decide.Item) bool {
	GinkgoHelper()
	obj := &metav1.PartialObjectMetadata{}
	switch kind, group, _ := strings.Cut(it.Kind, "."); {
	case it.Kind == decide.CRDKind:
		obj.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	case group == s.crd(0).Group:
		obj.SetGroupVersionKind(s.crd(0).GVK())
	default:
		for _, gvk := range rbac.OwnedKinds() {
			if gvk.Kind == kind {
				obj.SetGroupVersionKind(gvk)
			}
		}
	}
	err := k8s.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: it.Name}, obj)
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}
