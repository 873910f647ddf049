package undo

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// The labels Velero puts on what it restores: the Backup's name and the Restore's.
const (
	BackupNameLabel  = "velero.io/backup-name"
	RestoreNameLabel = "velero.io/restore-name"
)

// linkOwners writes again the ownerReferences of what was restored from the
// Backup (undoplan.Relink): the objects inv holds that carry its name and
// whose originals had owners, those of this undo's Restore and those of an
// earlier one interrupted before it linked them. It returns each such
// object's link: the owners it is linked to, written now or before, and
// those left out. reportOnly writes nothing.
func linkOwners(ctx context.Context, c client.Client, d *destroyed.Record, inv *inventory, backup string, reportOnly bool) (map[decide.Held]undoplan.Link, error) {
	now := make(map[decide.Held]undoplan.Live, len(d.Origins))
	var relink []decide.Held
	for _, o := range d.Origins {
		m := inv.there[o.Object]
		if m == nil {
			continue
		}
		now[o.Object] = undoplan.Live{UID: m.UID, APIVersion: m.APIVersion, Owners: m.OwnerReferences}
		if len(o.Owners) > 0 && m.Labels[BackupNameLabel] == backup {
			relink = append(relink, o.Object)
		}
	}
	present := map[string]bool{}
	for _, l := range undoplan.OwnersToLookUp(d.Origins, relink) {
		there, err := ownerThere(ctx, c, l)
		if err != nil {
			return nil, err
		}
		present[lookupKey(l.Ref, l.Namespace)] = there
	}
	in := undoplan.RelinkInput{Origins: d.Origins, Relink: relink, Now: now,
		Present: func(r metav1.OwnerReference, ns string) bool { return present[lookupKey(r, ns)] }}
	out := map[decide.Held]undoplan.Link{}
	for _, l := range undoplan.Relink(in) {
		if l.Write && !reportOnly {
			written, err := writeOwners(ctx, c, in, l.Object, inv.there[l.Object])
			switch {
			case apierrors.IsForbidden(err):
				// Not the undo's failure: the row says what right is missing.
				l.LeftOut = append(l.LeftOut, fmt.Sprintf("%s: not written, this identity may not patch %s (docs/backup.md, \"Rights\")", strings.Join(l.Linked, ", "), l.Object.ResourceOf()))
				l.Linked = nil
			case err != nil:
				return out, err
			default:
				l = written
			}
		}
		out[l.Object] = l
	}
	return out, nil
}

// writeOwners patches the ownerReferences of h (its metadata m) to what
// its link says, guarded by its resourceVersion; a conflict reads it again
// and decides again from what it has then.
func writeOwners(ctx context.Context, c client.Client, in undoplan.RelinkInput, h decide.Held, m *metav1.PartialObjectMetadata) (undoplan.Link, error) {
	l := undoplan.Link{Object: h}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		in.Now[h] = undoplan.Live{UID: m.UID, APIVersion: m.APIVersion, Owners: m.OwnerReferences}
		in.Relink = []decide.Held{h}
		links := undoplan.Relink(in)
		if len(links) == 0 || !links[0].Write {
			if len(links) > 0 {
				l = links[0] // linked meanwhile
			}
			return nil
		}
		l = links[0]
		patched := m.DeepCopy()
		patched.OwnerReferences = l.Owners
		err := c.Patch(ctx, patched, client.MergeFromWithOptions(m, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			fresh := m.DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(m), fresh); err != nil {
				return fmt.Errorf("reading %s again: %w", h, err)
			}
			m = fresh
		}
		return err
	})
	if err != nil {
		return l, fmt.Errorf("writing the owners of %s: %w", h, err)
	}
	return l, nil
}

// ownerThere reports whether the owner an ownerReference names is there,
// with its UID: in namespace ns when its kind is namespaced. A kind no
// longer served has none.
func ownerThere(ctx context.Context, c client.Client, l undoplan.OwnerLookup) (bool, error) {
	gv, err := schema.ParseGroupVersion(l.Ref.APIVersion)
	if err != nil {
		return false, nil
	}
	m, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: gv.Group, Kind: l.Ref.Kind}, gv.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("finding the kind of owner %s %s: %w", l.Ref.Kind, l.Ref.Name, err)
	}
	// A LIST of one name, not a GET: the rights that read the dependents
	// (manifests/velero/dependents.yaml) list every kind the garbage
	// collector watches, and get almost none.
	opts := []client.ListOption{client.MatchingFields{"metadata.name": l.Ref.Name}}
	where := l.Ref.Name
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		opts, where = append(opts, client.InNamespace(l.Namespace)), l.Namespace+"/"+l.Ref.Name
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(m.GroupVersionKind.Kind + "List"))
	if err := c.List(ctx, list, opts...); err != nil {
		return false, fmt.Errorf("reading owner %s %s: %w", l.Ref.Kind, where, err)
	}
	return len(list.Items) == 1 && list.Items[0].UID == l.Ref.UID, nil
}

// lookupKey keys an owner looked up in namespace ns.
func lookupKey(r metav1.OwnerReference, ns string) string {
	return r.APIVersion + "/" + r.Kind + "/" + ns + "/" + r.Name + "/" + string(r.UID)
}
