package dependents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// storeFailure is a kind whose LIST the API server could not answer from
// its storage, and that LIST's error.
type storeFailure struct {
	kind kind
	err  error
}

// storeReadError reports whether err says the API server cannot read some
// objects from its storage (kube-apiserver names each one).
func storeReadError(err error) bool {
	return apierrors.ReasonForError(err) == metav1.StatusReasonStoreReadError
}

// readAround reads what can be read of a kind whose LIST at the version the
// garbage collector reads failed (first): the whole kind at once where it
// can, else one namespace at a time, each object that cannot be read at
// that version at the version it is stored at (readScope). What nobody can
// read is in the UnreadKind, by namespace and by name.
func (s Scanner) readAround(ctx context.Context, k kind, first error, namespaces []string) ([]decide.Node, decide.UnreadKind, error) {
	u := decide.UnreadKind{Resource: k.held.ResourceOf(), Reason: decide.UnreadStorage, Namespaced: k.namespaced, Error: first.Error()}
	versions, err := s.otherVersions(k)
	if err != nil {
		return nil, u, err
	}
	r, err := s.readScope(ctx, k, versions, "", first)
	if err != nil {
		return nil, u, err
	}
	var nodes []decide.Node
	switch {
	case r.complete:
		nodes, u.Objects = r.nodes, r.unread
		u.Namespaces = placesOf(r.unread)
	case !k.namespaced:
		u.Namespaces, u.Objects = []string{""}, r.unread
	default:
		for _, ns := range namespaces {
			read, err := s.list(ctx, k, ns)
			if err == nil {
				nodes = append(nodes, read...)
				continue
			}
			if ctx.Err() != nil {
				return nil, u, fmt.Errorf("listing %s in %s: %w", u.Resource, ns, err)
			}
			r := scopeRead{unread: CorruptObjects(k.held, k.namespaced, err)}
			if storeReadError(err) {
				if r, err = s.readScope(ctx, k, versions, ns, err); err != nil {
					return nil, u, err
				}
			}
			nodes, u.Objects = append(nodes, r.nodes...), append(u.Objects, r.unread...)
			if !r.complete || len(r.unread) > 0 {
				u.Namespaces = append(u.Namespaces, ns)
			}
		}
		if len(namespaces) == 0 {
			u.Anywhere = true
		}
	}
	for _, n := range nodes {
		if n.Stranded {
			u.Stranded++
		}
	}
	slices.Sort(u.Namespaces)
	slices.SortFunc(u.Objects, func(a, b decide.Held) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	return nodes, u, nil
}

// scopeRead is what readScope read.
type scopeRead struct {
	nodes []decide.Node
	// unread are the objects no version reads.
	unread []decide.Held
	// complete: every object there was read, or is in unread.
	complete bool
}

// readScope reads the objects of k in namespace ns ("" every namespace) that
// a LIST at the version the garbage collector reads (first, its error) could
// not: a LIST at another version the API server serves reads every object
// stored at it without conversion; where none reads them all, each object is
// read by name at a version whose LIST did not name it. Where only a failing
// conversion webhook keeps the API server from reading (each object then
// fails at every version but the one it is stored at), the LISTs name every
// object there is; otherwise, or past the hundred objects the API server
// names at most, the scope is not complete.
func (s Scanner) readScope(ctx context.Context, k kind, versions []string, ns string, first error) (scopeRead, error) {
	pref := k.gvk.Version
	failed := map[string][]decide.Held{pref: CorruptObjects(k.held, k.namespaced, first)}
	enumerable := len(versions) > 0 && conversionOnly(first)
	for _, v := range versions {
		kv := k
		kv.gvk.Version = v
		nodes, err := s.list(ctx, kv, ns)
		switch {
		case err == nil:
			for i := range nodes {
				nodes[i].Stranded = slices.Contains(failed[pref], nodes[i].Held)
			}
			return scopeRead{nodes: nodes, complete: true}, nil
		case ctx.Err() != nil:
			return scopeRead{}, fmt.Errorf("listing %s at %s: %w", k.held.ResourceOf(), v, err)
		case !storeReadError(err):
			return scopeRead{unread: failed[pref]}, nil
		}
		failed[v] = CorruptObjects(k.held, k.namespaced, err)
		enumerable = enumerable && conversionOnly(err)
	}
	if !enumerable {
		return scopeRead{unread: failed[pref]}, nil
	}
	var all []decide.Held
	for _, v := range append([]string{pref}, versions...) {
		for _, h := range failed[v] {
			if !slices.Contains(all, h) {
				all = append(all, h)
			}
		}
	}
	out := scopeRead{complete: true}
	for _, h := range all {
		n, found, err := s.readByName(ctx, k, append([]string{pref}, versions...), failed, h)
		switch {
		case err != nil:
			return scopeRead{}, err
		case n != nil:
			n.Stranded = n.Stranded || slices.Contains(failed[pref], h)
			out.nodes = append(out.nodes, *n)
		case found:
			out.unread = append(out.unread, h)
		}
	}
	return out, nil
}

// readByName reads h at the first version whose LIST did not name it;
// found is false when it is gone, and the node nil when no version reads it.
func (s Scanner) readByName(ctx context.Context, k kind, versions []string, failed map[string][]decide.Held, h decide.Held) (*decide.Node, bool, error) {
	for _, v := range versions {
		if slices.Contains(failed[v], h) {
			continue
		}
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(schema.GroupVersionKind{Group: k.gvk.Group, Version: v, Kind: k.gvk.Kind})
		err := s.Reader.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Name}, o)
		switch {
		case err == nil:
			n := NodeOf(k.held, o)
			return &n, true, nil
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case ctx.Err() != nil:
			return nil, false, fmt.Errorf("reading %s %s at %s: %w", k.held.ResourceOf(), h.Name, v, err)
		}
	}
	return nil, true, nil
}

// conversionOnly reports whether every object a StorageReadError names
// failed in a conversion webhook, and it names them all.
func conversionOnly(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeTooMany || !strings.Contains(c.Message, "conversion webhook for ") {
			return false
		}
	}
	return true
}

// otherVersions are the versions but k's at which the API server serves
// k's resource with list and get, as discovery says.
func (s Scanner) otherVersions(k kind) ([]string, error) {
	groups, err := s.Discovery.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("reading the API groups: %w", err)
	}
	var out []string
	for _, g := range groups.Groups {
		if g.Name != k.gvk.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == k.gvk.Version {
				continue
			}
			list, err := s.Discovery.ServerResourcesForGroupVersion(v.GroupVersion)
			if err != nil {
				continue // that version is not described: not read there
			}
			for _, r := range list.APIResources {
				if r.Name == k.held.Resource && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "get") {
					out = append(out, v.Version)
				}
			}
		}
	}
	return out, nil
}

// placesOf are the namespaces of objects ("" for the cluster scope), each once.
func placesOf(hs []decide.Held) []string {
	var out []string
	for _, h := range hs {
		if !slices.Contains(out, h.Namespace) {
			out = append(out, h.Namespace)
		}
	}
	slices.Sort(out)
	return out
}
