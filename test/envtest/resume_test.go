package envtest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

const holdFinalizer = "test.csv-cleaner.io/hold"

func dropFinalizers(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	Expect(k8s.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
}

var _ = Describe("Resuming", func() {
	It("converges to the same end state with csv-cleaner restarted between every two steps", func(ctx SpecContext) {
		s := newScenario("resume")
		s.createPolicy(ctx, func(p *cleanupv1alpha1.CleanupPolicySpec) { p.CRDs = cleanupv1alpha1.Delete })
		s.create(ctx)
		stuck := s.operand(ctx, 0, s.ns("a"), "held", holdFinalizer)
		s.operand(ctx, 0, s.ns("b"), "free")
		s.ownedRBAC(ctx, "role")
		// A finalizer of someone else's holds the ClusterRole for a while, so that the RBAC step waits.
		role := &rbacv1.ClusterRole{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: s.id + "-role"}, role)).To(Succeed())
		base := role.DeepCopy()
		role.Finalizers = []string{holdFinalizer}
		Expect(k8s.Patch(ctx, role, client.MergeFrom(base))).To(Succeed())
		s.waitFinalizer(ctx)

		By("restart 1: after the finalizer was added, before the deletion")
		stopManager()
		startManager()
		s.deleteCSV(ctx)

		By("restart 2: while the operand step waits on an operand's finalizer")
		s.waitPhase(ctx, "Deleting/")
		Eventually(s.remaining).WithContext(ctx).Should(Equal([]string{
			"CRD " + s.crd(0).Name(), "CSV", "ClusterRole resume-role", "ClusterRoleBinding resume-role", "Widget " + s.ns("a") + "/held",
		}))
		Eventually(func(ctx context.Context) []cleanupv1alpha1.ObjectRef { return s.record(ctx).Status.Blocking }).WithContext(ctx).
			Should(ConsistOf(HaveField("Name", "held")))
		stopManager()
		dropFinalizers(ctx, stuck)
		startManager()

		By("restart 3: while the RBAC step waits on the ClusterRole's finalizer")
		Eventually(s.remaining).WithContext(ctx).Should(Equal([]string{"CRD " + s.crd(0).Name(), "CSV", "ClusterRole resume-role"}))
		Eventually(func(ctx context.Context) []cleanupv1alpha1.ObjectRef { return s.record(ctx).Status.Blocking }).WithContext(ctx).
			Should(ConsistOf(HaveField("Name", "resume-role")))
		stopManager()
		dropFinalizers(ctx, role)
		startManager()

		By("the end state: everything gone, the record Completed with every count")
		s.csvGone(ctx)
		Eventually(s.remaining).WithContext(ctx).Should(BeEmpty())
		rec := s.record(ctx)
		Expect(rec.Status.Phase).To(Equal(cleanupv1alpha1.PhaseCompleted))
		Expect(count(rec, "Widget."+s.crd(0).Group)).To(HaveField("Deleted", BeEquivalentTo(2)))
		Expect(count(rec, "ClusterRole.rbac.authorization.k8s.io")).To(HaveField("Deleted", BeEquivalentTo(1)))
		Expect(count(rec, "CustomResourceDefinition.apiextensions.k8s.io")).To(HaveField("Deleted", BeEquivalentTo(1)))

		By("restart 4: after completion, nothing happens again")
		stopManager()
		startManager()
		Expect(s.phase(ctx)).To(Equal("Completed/"))
	})

	It("completes an uninstall by deletion of the operator's namespace, without a record there", func(ctx SpecContext) {
		s := newScenario("nsdel")
		s.createPolicy(ctx)
		s.create(ctx)
		s.operand(ctx, 0, s.ns("a"), "w1")
		s.operand(ctx, 0, s.install.Namespace, "in-op-ns")
		s.ownedRBAC(ctx, "role")
		s.waitFinalizer(ctx)
		ns := &corev1.Namespace{}
		ns.Name = s.install.Namespace
		Expect(k8s.Delete(ctx, ns)).To(Succeed())
		By("the namespace controller deleting the CSV, csv-cleaner completing the uninstall, the namespace finishing")
		Eventually(func(ctx context.Context) error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(s.remaining(ctx)).To(Equal([]string{"CRD " + s.crd(0).Name()}))
	})

	It("never loses another controller's finalizer patched concurrently, nor its own", func(ctx SpecContext) {
		s := newScenario("race")
		s.createPolicy(ctx)
		csv := s.create(ctx)
		s.waitFinalizer(ctx)
		const rounds = 40
		var wg sync.WaitGroup
		errs := make(chan error, 2*rounds)
		// A writer that adds a finalizer of its own each round, with an optimistic lock.
		wg.Go(func() {
			defer GinkgoRecover()
			for i := range rounds {
				name := fmt.Sprintf("other.example.com/f%d", i)
				errs <- wrap("writer", retry.RetryOnConflict(persistent, func() error {
					cur := &operatorsv1alpha1.ClusterServiceVersion{}
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(csv), cur); err != nil {
						return err
					}
					base := cur.DeepCopy()
					cur.Finalizers = append(cur.Finalizers, name)
					return k8s.Patch(ctx, cur, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
				}))
			}
		})
		// Meanwhile csv-cleaner's finalizer is toggled by selecting and unselecting the CSV.
		wg.Go(func() {
			defer GinkgoRecover()
			for i := range rounds {
				label := s.id
				if i%2 == 0 {
					label = "unselected"
				}
				errs <- wrap("toggler", k8s.Patch(ctx, csv.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"test":"`+label+`"}}}`))))
			}
		})
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		Eventually(done).WithContext(ctx).Should(BeClosed())
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		var want []string
		for i := range rounds {
			want = append(want, fmt.Sprintf("other.example.com/f%d", i))
		}
		// The last toggle selected the CSV again: csv-cleaner's finalizer is back, and all the writer's are there.
		Eventually(func(ctx context.Context) []string {
			f := slices.Clone(s.finalizers(ctx))
			slices.Sort(f)
			return f
		}).WithContext(ctx).Should(Equal(append([]string{decide.DefaultFinalizer}, sortedCopy(want)...)))
		dropFinalizers(ctx, csv)
	})
})

// persistent retries a conflicting write for as long as the test runs.
var persistent = wait.Backoff{Steps: 100, Duration: 10 * time.Millisecond, Factor: 1.2, Jitter: 0.2, Cap: 200 * time.Millisecond}

func wrap(who string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", who, err)
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}
