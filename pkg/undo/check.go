package undo

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// inventory says which of some objects are there, with their metadata: a
// LIST of each of their kinds (as metadata, every namespace), not a GET of
// each object.
type inventory struct {
	there map[decide.Held]*metav1.PartialObjectMetadata
	// unread are the kinds that could not be listed, with what the API server
	// said; refused, the first of them the caller may not list, and why.
	unread  map[schema.GroupKind]string
	refused error
	// claims are the PersistentVolumeClaims there, by namespace/name.
	claims map[string]*corev1.PersistentVolumeClaim
	// served are the versions each custom resource's CRD serves (Kind.group),
	// as read for the LIST; a kind absent from it has no CRD there.
	served map[string][]string
}

// take lists, for each kind of objects, what is there now. A kind that is
// not served (its CRD is gone) has nothing there; a kind that cannot be
// listed (its conversion webhook fails, the caller may not list it) is
// unread, and so is each of its objects.
func take(ctx context.Context, c client.Client, wanted []decide.Held) (*inventory, error) {
	inv := &inventory{there: map[decide.Held]*metav1.PartialObjectMetadata{}, unread: map[schema.GroupKind]string{}, claims: map[string]*corev1.PersistentVolumeClaim{}, served: map[string][]string{}}
	unread := func(gk schema.GroupKind, err error) error {
		if ctx.Err() != nil {
			return err
		}
		inv.unread[gk] = err.Error()
		if apierrors.IsForbidden(err) && inv.refused == nil {
			inv.refused = err
		}
		return nil
	}
	listed := map[schema.GroupKind]bool{}
	for _, h := range wanted {
		gk := schema.GroupKind{Group: h.Group, Kind: h.Kind}
		if listed[gk] {
			continue
		}
		listed[gk] = true
		if gk == (schema.GroupKind{Kind: "PersistentVolumeClaim"}) {
			if err := inv.takeClaims(ctx, c); err != nil {
				if err := unread(gk, fmt.Errorf("listing persistentvolumeclaims: %w", err)); err != nil {
					return nil, err
				}
			}
			continue
		}
		gvk, versions, err := servedKind(ctx, c, h)
		if err != nil {
			return nil, err
		}
		if versions != nil {
			inv.served[h.Kind+"."+h.Group] = versions
		}
		if gvk.Version == "" {
			continue // its CRD is not served: none of it is there
		}
		err = objects.ListPages(ctx, c, objects.MetadataList(gvk), func(l *metav1.PartialObjectMetadataList) error {
			for i := range l.Items {
				o := &l.Items[i]
				o.SetGroupVersionKind(gvk)
				inv.there[decide.Held{Group: h.Group, Kind: h.Kind, Resource: h.Resource, Namespace: o.Namespace, Name: o.Name}] = o
			}
			return nil
		})
		if err != nil {
			if err := unread(gk, fmt.Errorf("listing %s: %w", schema.GroupResource{Group: h.Group, Resource: h.Resource}, err)); err != nil {
				return nil, err
			}
		}
	}
	return inv, nil
}

// servedKind is the kind of h at a version the API server serves now (no
// version when none): a custom resource's at its CRD's storage version, else
// its first served one, read from the CRD rather than a mapper that may not
// have seen an upgrade of it, with every version the CRD serves; Kubernetes'
// own kinds' as the mapper says.
func servedKind(ctx context.Context, c client.Client, h decide.Held) (schema.GroupVersionKind, []string, error) {
	gk := schema.GroupKind{Group: h.Group, Kind: h.Kind}
	if decide.BuiltInGroup(h.Group) {
		m, err := c.RESTMapper().RESTMapping(gk)
		switch {
		case meta.IsNoMatchError(err):
			return schema.GroupVersionKind{}, nil, nil
		case err != nil:
			return schema.GroupVersionKind{}, nil, fmt.Errorf("finding the kind %s: %w", gk, err)
		}
		return m.GroupVersionKind, nil, nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	switch err := c.Get(ctx, client.ObjectKey{Name: h.Resource + "." + h.Group}, crd); {
	case apierrors.IsNotFound(err):
		return schema.GroupVersionKind{}, nil, nil
	case err != nil:
		return schema.GroupVersionKind{}, nil, fmt.Errorf("reading CRD %s.%s: %w", h.Resource, h.Group, err)
	}
	version, served := "", []string{}
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
			if version == "" || v.Storage {
				version = v.Name
			}
		}
	}
	return gk.WithVersion(version), served, nil
}

// takeClaims lists the claims there, whole: a restored claim's volume is read too.
func (inv *inventory) takeClaims(ctx context.Context, c client.Client) error {
	return objects.ListPages(ctx, c, func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} },
		func(l *corev1.PersistentVolumeClaimList) error {
			for i := range l.Items {
				pvc := &l.Items[i]
				inv.claims[pvc.Namespace+"/"+pvc.Name] = pvc
				meta := &metav1.PartialObjectMetadata{ObjectMeta: pvc.ObjectMeta}
				meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"))
				inv.there[decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: pvc.Namespace, Name: pvc.Name}] = meta
			}
			return nil
		})
}

// refusedList is, when the caller may not list a kind of the objects, an
// error that says so and wraps the API server's Forbidden: the undo does not
// restore what it cannot tell is missing, and an Undo tries again until the
// rights are there (an admin's apply of manifests/velero, a role
// kube-controller-manager aggregates a moment later). nil otherwise.
func (inv *inventory) refusedList() error {
	if inv.refused == nil {
		return nil
	}
	return fmt.Errorf("nothing is restored while the undo cannot tell what of a kind is missing: %w", inv.refused)
}

// has reports whether the object is there.
func (inv *inventory) has(h decide.Held) bool { return inv.there[h] != nil }

// unreadWhy says why whether the object is there is not known; "" when it is.
func (inv *inventory) unreadWhy(h decide.Held) string {
	return inv.unread[schema.GroupKind{Group: h.Group, Kind: h.Kind}]
}
