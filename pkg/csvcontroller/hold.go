package csvcontroller

import (
	"context"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// holdRBAC puts the RBAC hold on a managed CSV's ClusterRoles and bindings,
// or, with the hold turned off, takes off any left from before.
func (r *Reconciler) holdRBAC(ctx context.Context, csv metav1.Object) error {
	if r.RBACHoldOff {
		return r.releaseRBAC(ctx, objects.Key(csv))
	}
	n, err := r.holder(r.Client).Hold(ctx, objects.Key(csv))
	if n > 0 {
		logr.FromContextOrDiscard(ctx).Info("Holding the CSV's cluster RBAC until its operands are gone", "changed", n)
	}
	return rbac.HoldError(err)
}

// holder edits the hold, finding the objects with lister: the cache, or
// the API server where a step of an uninstall must see the truth.
// The cache (r.Client) finds one CSV's objects by rbac.OwnerIndex (Setup).
// and what csv-cleaner patched since the cache's copy is read live.
func (r *Reconciler) holder(lister client.Reader) rbac.Holder {
	h := rbac.Holder{Lister: lister, Live: r.APIReader, Writer: r.Client, Finalizer: r.RBACHold}
	if lister == client.Reader(r.Client) {
		h.Indexed, h.Written = true, r.written
	}
	return h
}

// releaseRBAC takes the hold off the CSV's ClusterRoles and bindings, found in the cache.
func (r *Reconciler) releaseRBAC(ctx context.Context, csv types.NamespacedName) error {
	return r.releaseRBACOf(ctx, r.Client, csv)
}

// releaseRBACOf takes the hold off the CSV's ClusterRoles and bindings, found with lister.
func (r *Reconciler) releaseRBACOf(ctx context.Context, lister client.Reader, csv types.NamespacedName) error {
	_, err := r.releaseRBACSeen(ctx, lister, csv)
	return err
}

// releaseRBACSeen is releaseRBACOf, with what it found (rbac.Seen).
func (r *Reconciler) releaseRBACSeen(ctx context.Context, lister client.Reader, csv types.NamespacedName) (rbac.Seen, error) {
	n, seen, err := r.holder(lister).ReleaseOwnedSeen(ctx, csv)
	if n > 0 {
		logr.FromContextOrDiscard(ctx).Info("Released the hold on cluster RBAC", "changed", n)
	}
	return seen, rbac.HoldError(err)
}

// releaseOrphanedHold releases the hold on the RBAC of a CSV that is gone
// (an RBAC event names it, or it was just deleted): nothing holds it any more.
func (r *Reconciler) releaseOrphanedHold(ctx context.Context, key types.NamespacedName) error {
	if err := r.APIReader.Get(ctx, key, objects.CSVMetadata()); err == nil || client.IgnoreNotFound(err) != nil {
		return client.IgnoreNotFound(err) // it exists after all: the cache is behind
	}
	return r.releaseRBAC(ctx, key)
}
