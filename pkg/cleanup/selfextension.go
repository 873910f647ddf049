package cleanup

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// selfLookEvery spaces the live LISTs of ClusterExtensions while none is
// known to be csv-cleaner's own.
const selfLookEvery = 30 * time.Second

// selfExtension finds and remembers the ClusterExtension that installed
// csv-cleaner (plan.FindSelfExtension), for an install by OLM v1, which
// sets no OPERATOR_CONDITION_NAME.
type selfExtension struct {
	reader    client.Reader // live
	namespace string

	mu       sync.Mutex
	found    *plan.SelfExtension
	lastLook time.Time
}

// get is csv-cleaner's own ClusterExtension, nil when none is known.
func (s *selfExtension) get(ctx context.Context) (*plan.SelfExtension, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found != nil || (!s.lastLook.IsZero() && time.Since(s.lastLook) < selfLookEvery) {
		return s.found, nil
	}
	return s.look(ctx)
}

// consider looks again at once when the extension called name, read live,
// is one csv-cleaner could have been installed by: the periodic look may
// have come just before it was created.
func (s *selfExtension) consider(ctx context.Context, name string) (*plan.SelfExtension, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found != nil {
		return s.found, nil
	}
	ext := &ocv1.ClusterExtension{}
	if err := s.reader.Get(ctx, client.ObjectKey{Name: name}, ext); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if c, _ := plan.FindSelfExtension(s.namespace, []ocv1.ClusterExtension{*ext}); c == nil {
		return nil, nil
	}
	// A candidate: only a look at all of them can tell that it is the only one.
	return s.look(ctx)
}

// look lists the ClusterExtensions live and remembers csv-cleaner's own; s.mu is held.
func (s *selfExtension) look(ctx context.Context) (*plan.SelfExtension, error) {
	s.lastLook = time.Now()
	list := &ocv1.ClusterExtensionList{}
	if err := s.reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing ClusterExtensions to find csv-cleaner's own: %w", err)
	}
	found, err := plan.FindSelfExtension(s.namespace, list.Items)
	if err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Treating no ClusterExtension as csv-cleaner's own")
		return nil, nil
	}
	if found != nil {
		logr.FromContextOrDiscard(ctx).Info("Found the ClusterExtension that installed csv-cleaner", "clusterExtension", found.Name)
	}
	s.found = found
	return found, nil
}

// name is the own extension's name, "" when none is known.
func (s *selfExtension) name() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found == nil {
		return ""
	}
	return s.found.Name
}

// WatchOwnExtension makes csv-cleaner look for the ClusterExtension that
// installed it (OLM v1 serves ClusterExtensions, and OLM v0 did not install
// it): it then holds that extension, and the extension's deletion is its
// uninstall. Called before the manager starts.
func (r *Reconciler) WatchOwnExtension(reader client.Reader) {
	if r.Self.Name != "" || r.namespace() == "" {
		return
	}
	r.selfExt = &selfExtension{reader: reader, namespace: r.namespace()}
}

// IsOwnExtension reports whether ext is the ClusterExtension that installed csv-cleaner.
// Until csv-cleaner knows its own, each extension it reconciles is read
// live to see whether it could be (one GET a reconcile, none after).
func (r *Reconciler) IsOwnExtension(ctx context.Context, ext metav1.Object) (bool, error) {
	self, err := r.selfExt.consider(ctx, ext.GetName())
	return self != nil && self.UID == ext.GetUID(), err
}

// selfExtensionFate is what is happening to the ClusterExtension that
// installed csv-cleaner: its deletion, or its absence once known, is
// csv-cleaner's uninstall. OLM v1 upgrades an extension in place, so a
// deleted extension is never replaced by another version.
func (r *Reconciler) selfExtensionFate(ctx context.Context) (plan.SelfFate, string, error) {
	self, err := r.selfExt.get(ctx)
	if err != nil || self == nil {
		return plan.SelfInstalled, "", err
	}
	ext := &metav1.PartialObjectMetadata{}
	ext.SetGroupVersionKind(extensionKind)
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: self.Name}, ext); {
	case apierrors.IsNotFound(err), err == nil && ext.UID != self.UID:
		return plan.SelfUninstalled, fmt.Sprintf("its ClusterExtension %s is gone", self.Name), nil
	case err != nil:
		return plan.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's own ClusterExtension %s: %w", self.Name, err)
	case !ext.DeletionTimestamp.IsZero():
		return plan.SelfUninstalled, fmt.Sprintf("its ClusterExtension %s is deleted", self.Name), nil
	}
	return plan.SelfInstalled, "", nil
}

// ReleaseForOwnExtension is csv-cleaner's own uninstall when OLM v1
// installed it, run while its ClusterExtension is deleting and held by its
// finalizer (so its Deployment and RBAC are still in force): it removes
// every finalizer it placed on CSVs, other ClusterExtensions and cluster
// RBAC, and reports how many it removed. The caller releases the extension
// itself only after a pass that removed none: a reconcile that started
// before the deletion may still add one.
func (r *Reconciler) ReleaseForOwnExtension(ctx context.Context, ext client.Object, why string) (ctrl.Result, bool, error) {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Removing every finalizer csv-cleaner placed: csv-cleaner is being uninstalled", "why", why)
	released, err := r.releaser().ReleaseOthers(ctx)
	if len(released) > 0 {
		log.Info("Removed csv-cleaner's finalizers", "objects", len(released))
	}
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if len(released) > 0 {
		return ctrl.Result{RequeueAfter: time.Second}, false, nil
	}
	r.event(ext, corev1.EventTypeNormal, "FinalizersReleased", "Uninstall",
		"csv-cleaner removed every finalizer it placed on CSVs, ClusterExtensions and cluster RBAC; releasing its own ClusterExtension")
	return ctrl.Result{}, true, nil
}
