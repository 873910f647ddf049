//go:build e2e

package e2e_test

import (
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// childOperator is an operator as many are written: for each widget, it
// finds the Secret it controls by its ownerReference (controller-runtime's
// Owns, a Secret filtered by its controller's UID) and, when it controls
// none, makes one with a generated name and a new password. It runs in the
// test process while OLM runs its Deployment: an available replica starts
// it, none stops it (kwok runs the pods), so it lives and dies with the
// operator OLM installs.
type childOperator struct {
	crd        fixtures.CRD
	namespaces []string
	deployment client.ObjectKey
	// made counts the Secrets it made.
	made atomic.Int32

	mu sync.Mutex
	// reconciled counts, by widget UID, the reconciles that found it.
	reconciled map[types.UID]int
	stop       context.CancelFunc
	done       chan struct{}
	// runs counts the times it started.
	runs int
}

// startChildOperator watches the operator's Deployment for the rest of the
// spec, running the childOperator while it has an available replica.
func startChildOperator(crd fixtures.CRD, deployment client.ObjectKey, namespaces ...string) *childOperator {
	GinkgoHelper()
	op := &childOperator{crd: crd, namespaces: namespaces, deployment: deployment, reconciled: map[types.UID]int{}}
	watch, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(watched)
		for watch.Err() == nil {
			d := &appsv1.Deployment{}
			up := kc.Client.Get(watch, op.deployment, d) == nil && d.DeletionTimestamp == nil && ptr.Deref(d.Spec.Replicas, 1) > 0 && d.Status.AvailableReplicas > 0
			op.run(up)
			select {
			case <-watch.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		op.run(false)
	}()
	DeferCleanup(func() {
		stop()
		<-watched
	})
	return op
}

// run starts the operator's manager when up and it is not running, and
// stops it when it is and up is false.
func (op *childOperator) run(up bool) {
	op.mu.Lock()
	running := op.stop != nil
	op.mu.Unlock()
	switch {
	case up && !running:
		op.start()
	case !up && running:
		op.mu.Lock()
		stop, done := op.stop, op.done
		op.stop = nil
		op.mu.Unlock()
		stop()
		<-done
	}
}

// start starts a manager whose controller reconciles widgets and owns
// Secrets, as a controller-runtime operator does at its pod's start.
func (op *childOperator) start() {
	GinkgoHelper()
	byNamespace := map[string]cache.Config{}
	for _, ns := range op.namespaces {
		byNamespace[ns] = cache.Config{}
	}
	mgr, err := ctrl.NewManager(kc.Config, ctrl.Options{Cache: cache.Options{DefaultNamespaces: byNamespace},
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	Expect(err).NotTo(HaveOccurred())
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(op.crd.GVK())
	Expect(ctrl.NewControllerManagedBy(mgr).Named("child-operator").For(widget).Owns(&corev1.Secret{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return op.reconcile(ctx, mgr.GetClient(), req)
		}))).To(Succeed())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	op.mu.Lock()
	op.stop, op.done = stop, done
	op.runs++
	op.mu.Unlock()
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
}

// reconcile makes the widget's Secret when it controls none.
func (op *childOperator) reconcile(ctx context.Context, c client.Client, req reconcile.Request) (reconcile.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(op.crd.GVK())
	if err := c.Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if w.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(w.GetNamespace())); err != nil {
		return reconcile.Result{}, err
	}
	op.mu.Lock()
	op.reconciled[w.GetUID()]++
	op.mu.Unlock()
	for i := range secrets.Items {
		if metav1.IsControlledBy(&secrets.Items[i], w) {
			return reconcile.Result{}, nil
		}
	}
	password := make([]byte, 24)
	_, _ = rand.Read(password)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), GenerateName: w.GetName() + "-"}, Data: map[string][]byte{"password": password}}
	if err := controllerutil.SetControllerReference(w, s, c.Scheme()); err != nil {
		return reconcile.Result{}, err
	}
	if err := c.Create(ctx, s); err != nil {
		return reconcile.Result{}, err
	}
	op.made.Add(1)
	return reconcile.Result{}, nil
}

// reconciles is how many reconciles found the widget of uid.
func (op *childOperator) reconciles(uid types.UID) int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.reconciled[uid]
}

// running reports whether the operator runs, and how many times it started.
func (op *childOperator) running() (bool, int) {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.stop != nil, op.runs
}

// controlled are the Secrets of namespace that the widget of uid controls.
func controlled(ctx context.Context, namespace string, uid types.UID) []corev1.Secret {
	GinkgoHelper()
	secrets := &corev1.SecretList{}
	Expect(kc.Client.List(ctx, secrets, client.InNamespace(namespace))).To(Succeed())
	var out []corev1.Secret
	for _, s := range secrets.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && ref.UID == uid {
			out = append(out, s)
		}
	}
	return out
}
