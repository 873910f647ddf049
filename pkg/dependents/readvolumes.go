package dependents

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// A LIST is read instead of GETs when it reads at most listPerWanted
// objects for each one wanted, and at least listAtLeast are wanted: a
// page of objects.PageSize objects costs the API server one request where
// GETs cost one each (docs/performance.md has the times).
const (
	listAtLeast   = 8
	listPerWanted = 10
)

// byList reports whether wanted objects among total of their kind (and
// namespace) are read by a LIST rather than by a GET each. total is what
// the scan counted: a larger wanted (objects made since) still lists.
func byList(wanted, total int) bool {
	return wanted >= listAtLeast && total <= wanted*listPerWanted
}

// counted are how many objects of the scan's nodes there are of each
// namespace of the core group's resource.
func counted(nodes []decide.Node, resource string) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		if n.Group == "" && n.Resource == resource {
			out[n.Namespace]++
		}
	}
	return out
}

// readClaims reads the claims, live: a namespace's by one paged LIST where
// byList says so (totals, per namespace), a GET each otherwise. A claim
// gone since the scan is not among them.
func (s Scanner) readClaims(ctx context.Context, claims []decide.Node, totals map[string]int) (map[client.ObjectKey]*corev1.PersistentVolumeClaim, error) {
	wanted := map[string]int{}
	for _, c := range claims {
		wanted[c.Namespace]++
	}
	out := make(map[client.ObjectKey]*corev1.PersistentVolumeClaim, len(claims))
	for ns, n := range wanted {
		if !byList(n, totals[ns]) {
			continue
		}
		err := objects.ListPages(ctx, s.Reader, func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} },
			func(l *corev1.PersistentVolumeClaimList) error {
				for i := range l.Items {
					out[client.ObjectKeyFromObject(&l.Items[i])] = &l.Items[i]
				}
				return nil
			}, client.InNamespace(ns))
		if err != nil {
			return nil, fmt.Errorf("listing the PersistentVolumeClaims of namespace %s: %w", ns, err)
		}
	}
	var one []client.ObjectKey
	for _, c := range claims {
		if !byList(wanted[c.Namespace], totals[c.Namespace]) {
			one = append(one, client.ObjectKey{Namespace: c.Namespace, Name: c.Name})
		}
	}
	return out, getEach(ctx, s.Reader, "PersistentVolumeClaim", one, func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }, out)
}

// readVolumes reads the PersistentVolumes named, live: by one paged LIST
// where byList says so (of total), a GET each otherwise. A volume that is
// not there is not among them.
func (s Scanner) readVolumes(ctx context.Context, names []string, total int) (map[client.ObjectKey]*corev1.PersistentVolume, error) {
	out := make(map[client.ObjectKey]*corev1.PersistentVolume, len(names))
	if byList(len(names), total) {
		err := objects.ListPages(ctx, s.Reader, func() *corev1.PersistentVolumeList { return &corev1.PersistentVolumeList{} },
			func(l *corev1.PersistentVolumeList) error {
				for i := range l.Items {
					out[client.ObjectKey{Name: l.Items[i].Name}] = &l.Items[i]
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("listing the PersistentVolumes: %w", err)
		}
		return out, nil
	}
	keys := make([]client.ObjectKey, 0, len(names))
	for _, name := range names {
		keys = append(keys, client.ObjectKey{Name: name})
	}
	return out, getEach(ctx, s.Reader, "PersistentVolume", keys, func() *corev1.PersistentVolume { return &corev1.PersistentVolume{} }, out)
}

// getEach reads the object of kind at each key by a GET of its own into
// out; one that is not there is not among them.
func getEach[T client.Object](ctx context.Context, r client.Reader, kind string, keys []client.ObjectKey, empty func() T, out map[client.ObjectKey]T) error {
	for _, key := range keys {
		obj := empty()
		switch err := r.Get(ctx, key, obj); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading %s %s: %w", kind, key, err)
		default:
			out[key] = obj
		}
	}
	return nil
}
