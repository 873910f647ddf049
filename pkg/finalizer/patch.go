package finalizer

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// Patch sets one object's finalizers to what change returns (nil leaves it
// alone), from obj's copy, then from a live read after a conflict or a
// refusal (RBAC's escalation check on ClusterRoles comes before the
// resourceVersion's). A gone object is no error; a patch whose reply was
// lost is found done and counted once. changed reports a write.
func Patch(ctx context.Context, reader client.Reader, writer client.Writer, obj *metav1.PartialObjectMetadata, change func(*metav1.PartialObjectMetadata) []string) (changed bool, err error) {
	return PatchCached(ctx, reader, writer, nil, obj, change)
}

// PatchCached is Patch for a copy of obj read from a cache: when written
// says that this process patched the object since the cache's copy (the
// cache has not seen its own write yet), the object is read live first, so
// that a stale copy costs a read, never a 409 Conflict. Every patch it
// writes is noted in written. A nil written is Patch.
func PatchCached(ctx context.Context, reader client.Reader, writer client.Writer, written *Written, obj *metav1.PartialObjectMetadata, change func(*metav1.PartialObjectMetadata) []string) (changed bool, err error) {
	gvk := obj.GroupVersionKind()
	attempts := 0
	// A copy older than this process's own last patch is patched from that
	// patch (its resourceVersion guards it); only when that is not known is
	// the object read live.
	lastVersion, lastFinalizers, stale := written.Last(obj)
	if stale && lastVersion != "" {
		obj.ResourceVersion, obj.Finalizers, stale = lastVersion, lastFinalizers, false
	}
	var lost []string // the list of a patch whose reply was lost
	retriable := func(err error) bool { return apierrors.IsConflict(err) || attempts == 1 && apierrors.IsForbidden(err) }
	err = retry.OnError(retry.DefaultRetry, retriable, func() error {
		attempts++
		if attempts > 1 || stale {
			if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			obj.SetGroupVersionKind(gvk)
		}
		if lost != nil && slices.Equal(obj.Finalizers, lost) {
			changed = true // the lost patch was done
			written.Note(obj)
			return nil
		}
		list := change(obj)
		if list == nil {
			return nil
		}
		base := obj.DeepCopy()
		obj.Finalizers = list
		if err := writer.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			if transient.WasLost(err) {
				lost = list
			}
			return err
		}
		written.Note(obj)
		changed = true
		return nil
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return changed, err
}

// Without is a copy of list without the names ours reports; never nil, so
// that an empty list is still a change to write.
func Without(list []string, ours func(string) bool) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if !ours(x) {
			out = append(out, x)
		}
	}
	return out
}

// Is returns a predicate that matches exactly name, for Without.
func Is(name string) func(string) bool {
	return func(x string) bool { return x == name }
}

// Has reports whether list holds a name ours reports.
func Has(list []string, ours func(string) bool) bool {
	return slices.ContainsFunc(list, ours)
}

// Subset reports whether every name in a is also in b: an edit of a
// deleting object's finalizers may only remove names, never add one.
func Subset(a, b []string) bool {
	for _, name := range a {
		if !slices.Contains(b, name) {
			return false
		}
	}
	return true
}
