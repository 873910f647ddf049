package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	finalizerpkg "github.com/csv-cleaner/csv-cleaner/pkg/finalizer"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// HoldFinalizer is the default finalizer that keeps an operator's ClusterRoles and bindings in force
// (terminating) after OLM deletes them, until the operator's operands are
// gone: OLM deletes them the moment the CSV is deleted (OLM issue 2235),
// and the operator would lose the rights it needs to finalize its operands.
const HoldFinalizer = "cleanup.csv-cleaner.io/rbac-hold"

// HeldKinds are the kinds csv-cleaner holds.
var HeldKinds = []schema.GroupVersionKind{ClusterRoleBinding, ClusterRole}

// AnyCSVOwner selects the objects OLM labels as owned by some CSV.
func AnyCSVOwner() labels.Selector {
	r, err := labels.NewRequirement(OwnerKindKey, selection.Equals, []string{decide.KindCSV})
	if err != nil {
		panic(err) // constant requirement
	}
	return labels.NewSelector().Add(*r)
}

// OwnerOf returns the CSV an object's three owner labels name.
func OwnerOf(objLabels map[string]string) (types.NamespacedName, bool) {
	csv := types.NamespacedName{Namespace: objLabels[OwnerNamespaceKey], Name: objLabels[OwnerKey]}
	ok := objLabels[OwnerKindKey] == decide.KindCSV && csv.Name != "" && csv.Namespace != ""
	return csv, ok
}

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=get;list;watch;patch

// Holder edits the hold finalizer on ClusterRoles and bindings.
type Holder struct {
	// Lister finds the objects: a cache that watches their metadata, or the API server.
	Lister client.Reader
	// Live reads an object again after a conflict.
	Live   client.Reader
	Writer client.Writer
	// Finalizer is the hold finalizer.
	Finalizer string
	// Indexed says that Lister is a cache with OwnerIndex on the held kinds:
	// one CSV's objects are then found by the index, not by a scan of every
	// cached object with a label selector.
	Indexed bool
	// Written, with a cache as Lister, is what this process patched: a
	// cached copy older than its own patch is read live, not patched.
	Written *finalizerpkg.Written
}

// OwnerIndex is the cache index of the held kinds by the CSV their three
// owner labels name (OwnerIndexValue).
const OwnerIndex = "csv-cleaner.owner"

// OwnerIndexValue is an object's OwnerIndex value: its owner CSV's
// namespace/name, or none when its owner labels name no CSV.
func OwnerIndexValue(obj client.Object) []string {
	csv, ok := OwnerOf(obj.GetLabels())
	if !ok {
		return nil
	}
	return []string{csv.String()}
}

// Hold puts the hold finalizer on the CSV's live ClusterRoles and bindings.
// A terminating one is left alone: it cannot take a new finalizer, and one
// that carries the hold is being deleted by OLM in an uninstall, whose RBAC
// step releases it. It changes nothing but metadata.finalizers, which
// Kubernetes allows without the RBAC escalation check. It returns how many
// objects it changed.
func (h Holder) Hold(ctx context.Context, csv types.NamespacedName) (int, error) {
	finalizer := h.Finalizer
	n, _, err := h.edit(ctx, owned(csv), func(obj *metav1.PartialObjectMetadata) []string {
		if obj.DeletionTimestamp != nil || slices.Contains(obj.Finalizers, finalizer) {
			return nil
		}
		return append(slices.Clone(obj.Finalizers), finalizer)
	})
	return n, err
}

// ReleaseOwned takes the hold finalizer off the CSV's ClusterRoles and bindings.
func (h Holder) ReleaseOwned(ctx context.Context, csv types.NamespacedName) (int, error) {
	n, _, err := h.ReleaseOwnedSeen(ctx, csv)
	return n, err
}

// Seen is what an edit found of each held kind, as its patches left it.
type Seen map[schema.GroupVersionKind][]metav1.PartialObjectMetadata

// ReleaseOwnedSeen is ReleaseOwned, with what it found less what its patches
// let go (terminating, no finalizer left: gone), so that a step that deletes
// them next needs no second read.
func (h Holder) ReleaseOwnedSeen(ctx context.Context, csv types.NamespacedName) (int, Seen, error) {
	n, seen, err := h.release(ctx, owned(csv))
	for gvk, items := range seen {
		seen[gvk] = slices.DeleteFunc(items, func(o metav1.PartialObjectMetadata) bool {
			return o.DeletionTimestamp != nil && len(o.Finalizers) == 0
		})
	}
	return n, seen, err
}

// Release takes the hold finalizer off the objects sel selects (every
// CSV's with AnyCSVOwner), except those of the CSVs in keep.
func (h Holder) Release(ctx context.Context, sel labels.Selector, keep ...types.NamespacedName) (int, error) {
	n, _, err := h.release(ctx, heldSet{labels: sel}, keep...)
	return n, err
}

func (h Holder) release(ctx context.Context, sel heldSet, keep ...types.NamespacedName) (int, Seen, error) {
	finalizer := h.Finalizer
	return h.edit(ctx, sel, func(obj *metav1.PartialObjectMetadata) []string {
		if !slices.Contains(obj.Finalizers, finalizer) || ownedByAny(obj.Labels, keep) {
			return nil
		}
		return finalizerpkg.Without(obj.Finalizers, finalizerpkg.Is(finalizer))
	})
}

func ownedByAny(objLabels map[string]string, csvs []types.NamespacedName) bool {
	owner, ok := OwnerOf(objLabels)
	return ok && slices.Contains(csvs, owner)
}

// edit applies change to the finalizers of each held kind's objects that
// sel selects; change returns nil to leave one alone. Each write is a merge
// patch of the finalizers guarded by the resourceVersion, retried on
// conflict with a fresh live read, so a stale list costs a retry, never a
// lost change.
func (h Holder) edit(ctx context.Context, sel heldSet, change func(*metav1.PartialObjectMetadata) []string) (int, Seen, error) {
	// The kinds at once: their patches are independent.
	var (
		g       errgroup.Group
		changed atomic.Int64
	)
	found := make([][]metav1.PartialObjectMetadata, len(HeldKinds))
	for i, gvk := range HeldKinds {
		g.Go(func() error {
			items, n, err := h.editKind(ctx, gvk, sel, change)
			changed.Add(int64(n))
			found[i] = items
			return err
		})
	}
	err := g.Wait()
	seen := Seen{}
	for i, gvk := range HeldKinds {
		seen[gvk] = found[i]
	}
	return int(changed.Load()), seen, err
}

// editKind is edit for one kind; it returns the objects as it left them.
func (h Holder) editKind(ctx context.Context, gvk schema.GroupVersionKind, sel heldSet, change func(*metav1.PartialObjectMetadata) []string) ([]metav1.PartialObjectMetadata, int, error) {
	items, err := h.list(ctx, gvk, sel)
	if err != nil {
		return nil, 0, err
	}
	changed := 0
	for i := range items {
		obj := &items[i]
		done, err := finalizerpkg.PatchCached(ctx, h.Live, h.Writer, h.Written, obj, change)
		if apierrors.IsForbidden(err) {
			return items, changed, &ForbiddenError{Op: "changing the finalizers of", GVK: gvk, Name: obj.Name, Err: err}
		}
		if err != nil {
			return items, changed, fmt.Errorf("changing the finalizers of %s %s: %w", KindName(gvk), obj.Name, err)
		}
		if done {
			changed++
		}
	}
	return items, changed, nil
}

// Count counts the objects sel selects that carry the hold finalizer,
// except those of the CSVs in keep.
func (h Holder) Count(ctx context.Context, sel labels.Selector, keep ...types.NamespacedName) (int, error) {
	n := 0
	for _, gvk := range HeldKinds {
		items, err := h.list(ctx, gvk, heldSet{labels: sel})
		if err != nil {
			return n, err
		}
		for _, o := range items {
			if slices.Contains(o.Finalizers, h.Finalizer) && !ownedByAny(o.Labels, keep) {
				n++
			}
		}
	}
	return n, nil
}

// heldSet is which objects of a held kind an edit concerns: one CSV's
// (owner set), or those a label selector selects.
type heldSet struct {
	owner  *types.NamespacedName
	labels labels.Selector
}

func owned(csv types.NamespacedName) heldSet {
	return heldSet{owner: &csv, labels: OwnerSelector(csv)}
}

// list lists a held kind's objects: by OwnerIndex for one CSV's in an
// indexed cache, else by the label selector. The selector is checked on
// every object either way.
func (h Holder) list(ctx context.Context, gvk schema.GroupVersionKind, sel heldSet) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opt := client.ListOption(client.MatchingLabelsSelector{Selector: sel.labels})
	if h.Indexed && sel.owner != nil {
		opt = client.MatchingFields{OwnerIndex: sel.owner.String()}
	}
	if err := h.Lister.List(ctx, list, opt); err != nil {
		return nil, fmt.Errorf("listing %s: %w", KindName(gvk), err)
	}
	items := list.Items[:0]
	for _, o := range list.Items {
		if sel.labels.Matches(labels.Set(o.Labels)) {
			o.SetGroupVersionKind(gvk)
			items = append(items, o)
		}
	}
	return items, nil
}

// HoldName is the hold finalizer: the configured one, or HoldFinalizer
// when none is configured ("").
func HoldName(configured string) string {
	if configured == "" {
		return HoldFinalizer
	}
	return configured
}

// HoldError says which permission a refused patch of the hold lacks.
func HoldError(err error) error {
	if forbidden := (*ForbiddenError)(nil); errors.As(err, &forbidden) {
		return errors.Join(errors.New("csv-cleaner needs patch on clusterroles and clusterrolebindings to hold them"), err)
	}
	return err
}
