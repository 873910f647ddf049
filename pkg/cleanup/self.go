package cleanup

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// isSelf reports whether the CSV is csv-cleaner's own.
func (r *Reconciler) isSelf(csv metav1.Object) bool {
	return r.Self.Name != "" && csvKey(csv) == r.Self
}

// SelfFate says what is happening to csv-cleaner's own install (plan.DecideSelf).
// While it is installed that takes two reads of the cache (its namespace and
// its CSV's metadata); only once its CSV is deleted or gone does it read the
// CSVs and Subscriptions of its namespace live. A replacement or an
// uninstall, once seen, is remembered until its CSV is seen installed again
// (a reinstall re-creates it); a terminating namespace turns a replacement
// into an uninstall. Installed by OLM v1 (no CSV of its own), it is what
// happens to its ClusterExtension (selfExtensionFate). Both controllers ask.
func (r *Reconciler) SelfFate(ctx context.Context) (plan.SelfFate, string, error) {
	ns := r.namespace()
	if ns == "" {
		return plan.SelfInstalled, "", nil
	}
	namespace := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ns}, namespace); err != nil && !apierrors.IsNotFound(err) {
		return plan.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's namespace %s: %w", ns, err)
	}
	if !namespace.DeletionTimestamp.IsZero() {
		fate, why := plan.DecideSelf(plan.SelfInput{Self: r.Self, NamespaceTerminating: true})
		return fate, why, nil
	}
	if r.Self.Name == "" {
		return r.selfExtensionFate(ctx)
	}
	self := csvMetadata()
	err := r.Client.Get(ctx, r.Self, self)
	if err != nil && !apierrors.IsNotFound(err) {
		return plan.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's own CSV %s: %w", r.Self, err)
	}
	r.selfMu.Lock()
	defer r.selfMu.Unlock()
	if err == nil && self.DeletionTimestamp.IsZero() {
		// Installed (again, after a reinstall): what was seen before is over.
		r.selfSeen, r.selfWhy = plan.SelfInstalled, ""
		return plan.SelfInstalled, "", nil
	}
	if r.selfSeen != plan.SelfInstalled {
		return r.selfSeen, r.selfWhy, nil
	}
	in, err := readSelfInput(ctx, r.APIReader, r.Self, ns)
	if err != nil {
		return plan.SelfInstalled, "", err
	}
	fate, why := plan.DecideSelf(in)
	if fate != plan.SelfInstalled {
		logr.FromContextOrDiscard(ctx).Info("csv-cleaner's own CSV is being deleted", "self", r.Self, "fate", fate.String(), "why", why)
		r.selfSeen, r.selfWhy = fate, why
	}
	return fate, why, nil
}

// namespace is csv-cleaner's own namespace, "" when not known.
func (r *Reconciler) namespace() string {
	if r.Namespace != "" {
		return r.Namespace
	}
	return r.Self.Namespace
}

// readSelfInput reads with reader what plan.DecideSelf needs.
func readSelfInput(ctx context.Context, reader client.Reader, self types.NamespacedName, namespace string) (plan.SelfInput, error) {
	in := plan.SelfInput{Self: self}
	if namespace == "" {
		return in, nil
	}
	// A namespace that is not there is not read as terminating: a pod's own
	// namespace is deleted only after its pods, so it means a POD_NAMESPACE
	// that names no namespace, which must not release everything.
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); client.IgnoreNotFound(err) != nil {
		return in, fmt.Errorf("getting csv-cleaner's namespace %s: %w", namespace, err)
	}
	in.NamespaceTerminating = !ns.DeletionTimestamp.IsZero()
	if self.Name == "" || in.NamespaceTerminating {
		return in, nil
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	switch err := reader.Get(ctx, self, csv); {
	case err == nil:
		in.CSV = csv
	case !apierrors.IsNotFound(err):
		return in, fmt.Errorf("getting csv-cleaner's own CSV %s: %w", self, err)
	}
	siblings := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := reader.List(ctx, siblings, client.InNamespace(self.Namespace)); err != nil {
		return in, fmt.Errorf("listing CSVs in %s: %w", self.Namespace, err)
	}
	in.Siblings = siblings.Items
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := reader.List(ctx, subs, client.InNamespace(self.Namespace)); err != nil && !apierrors.IsNotFound(err) {
		return in, fmt.Errorf("listing Subscriptions in %s: %w", self.Namespace, err)
	}
	in.Subscriptions = subs.Items
	return in, nil
}

// reconcileSelf keeps csv-cleaner's finalizer on its own CSV, whatever the
// policies say, so that it runs when csv-cleaner is uninstalled, and acts on
// what plan.DecideSelf says of its deletion:
//   - replaced (an upgrade, a reinstall): it releases its own CSV and the hold
//     on its own version's RBAC, and leaves every other finalizer to the
//     version that takes over;
//   - uninstalled: it takes every finalizer it placed off every CSV and every
//     ClusterRole and binding, and only when a pass finds none left releases
//     its own CSV. Uninstalls still under way are abandoned, with an Event.
//
// OLM deletes csv-cleaner's own ClusterRoles and bindings the moment its CSV
// is deleted, and csv-cleaner needs them to finish: so it holds them like
// any managed operator's, and keeps a binding of its own to each of its
// ClusterRoles (rbac.EnsureSelfBindings) that OLM does not delete. Its own
// ClusterRoles are released last, and the garbage collector then removes
// that binding.
func (r *Reconciler) reconcileSelf(ctx context.Context, self *metav1.PartialObjectMetadata, fate plan.SelfFate, why string) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	switch fate {
	case plan.SelfReplaced:
		if r.Finalizers.HeldBy(self.Finalizers) {
			log.Info("Releasing csv-cleaner's own CSV and its own RBAC only: the version that takes over keeps every other finalizer", "why", why)
			r.event(self, corev1.EventTypeNormal, "HandedOver", "Upgrade",
				"csv-cleaner releases its own CSV and the hold on its own RBAC, and leaves every other finalizer to the version that takes over: %s", why)
			if err := r.patchFinalizers(ctx, self, r.Finalizers.Remove); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.releaseOwnRBAC(ctx)
	case plan.SelfUninstalled:
		return r.reconcileSelfUninstall(ctx, self, why)
	}
	if err := r.patchFinalizers(ctx, self, r.Finalizers.Ensure); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.holdRBAC(ctx, self); err != nil {
		return ctrl.Result{}, err
	}
	n, err := rbac.EnsureSelfBindings(ctx, r.APIReader, r.Client, csvKey(self))
	if n > 0 {
		log.Info("Bound csv-cleaner's ServiceAccount to its own ClusterRoles a second time, for its own uninstall", "created", n)
	}
	return ctrl.Result{}, err
}

// reconcileSelfUninstall releases everything, then its own CSV and RBAC.
func (r *Reconciler) reconcileSelfUninstall(ctx context.Context, self *metav1.PartialObjectMetadata, why string) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	if !r.Finalizers.HeldBy(self.Finalizers) {
		// Released already; what is left is the hold on its own RBAC.
		return ctrl.Result{}, r.releaseOwnRBAC(ctx)
	}
	log.Info("Removing every finalizer csv-cleaner placed: csv-cleaner is being uninstalled", "why", why)
	released, err := r.releaser().ReleaseOthers(ctx)
	if len(released) > 0 {
		log.Info("Removed csv-cleaner's finalizers", "objects", len(released))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(released) > 0 {
		// A reconcile that started before the deletion may still add one:
		// its own CSV goes only after a pass that finds nothing left.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	r.event(self, corev1.EventTypeNormal, "FinalizersReleased", "Uninstall",
		"csv-cleaner removed every finalizer it placed on CSVs and cluster RBAC; releasing its own CSV")
	if err := r.patchFinalizers(ctx, self, r.Finalizers.Remove); err != nil {
		return ctrl.Result{}, err
	}
	// Last, its own ClusterRoles and bindings: without them csv-cleaner can
	// do nothing more, and OLM then lets the CSV go.
	return ctrl.Result{}, r.releaseOwnRBAC(ctx)
}

// releaseOwnRBAC releases the hold on csv-cleaner's own ClusterRoles and
// bindings, in the order that keeps its rights until the last one. A
// refusal means they are gone already: nothing is left to do.
func (r *Reconciler) releaseOwnRBAC(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Releasing csv-cleaner's own cluster RBAC, last")
	_, err := r.holder(r.APIReader).ReleaseSelf(ctx, r.Self)
	if apierrors.IsForbidden(err) {
		log.Info("csv-cleaner's own rights are gone: OLM removes what is left of this version")
		return nil
	}
	return holdError(err)
}

// releaser removes what this csv-cleaner placed (see Releaser).
func (r *Reconciler) releaser() Releaser {
	return Releaser{Live: r.APIReader, Writer: r.Client, Finalizers: r.Finalizers, Hold: r.holdName(),
		Self: r.Self, SelfExtension: r.selfExt.name(), Workers: r.DeleteWorkers, Reporter: reporter()}
}
