package dependents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
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

// readScope reads, in namespace ns ("" every namespace), the objects of k a
// LIST at the garbage collector's version (first, its error) could not: at
// another served version, or by name at a version whose LIST did not name
// them; complete only when those LISTs name as many objects as countScope
// counts (docs/backup.md, "A kind nobody can read").
func (s Scanner) readScope(ctx context.Context, k kind, versions []string, ns string, first error) (scopeRead, error) {
	pref := k.gvk.Version
	incomplete := scopeRead{unread: CorruptObjects(k.held, k.namespaced, first)}
	if truncated(first) {
		return incomplete, nil
	}
	failed := map[string][]decide.Held{pref: incomplete.unread}
	for _, v := range versions {
		nodes, err := s.list(ctx, k.at(v), ns)
		switch {
		case err == nil:
			for i := range nodes {
				nodes[i].Stranded = slices.Contains(failed[pref], nodes[i].Held)
			}
			return scopeRead{nodes: nodes, complete: true}, nil
		case ctx.Err() != nil:
			return scopeRead{}, fmt.Errorf("listing %s at %s: %w", k.held.ResourceOf(), v, err)
		case !storeReadError(err) || truncated(err):
			return incomplete, nil
		}
		failed[v] = CorruptObjects(k.held, k.namespaced, err)
	}
	all := slices.Clone(failed[pref])
	for _, v := range versions {
		for _, h := range failed[v] {
			if !slices.Contains(all, h) {
				all = append(all, h)
			}
		}
	}
	total, counted, err := s.countScope(ctx, k, append([]string{pref}, versions...), ns)
	if err != nil || !counted || total != len(all) {
		return incomplete, err
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

// countScope counts the objects of k in namespace ns, as the first page of
// one object of a LIST at one of versions says (the object and the
// remainingItemCount after it): counted is false when no version reads the
// first object there.
func (s Scanner) countScope(ctx context.Context, k kind, versions []string, ns string) (int, bool, error) {
	for _, v := range versions {
		page := objects.MetadataList(k.at(v).gvk)()
		opts := []client.ListOption{client.Limit(1)}
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		err := s.Reader.List(ctx, page, opts...)
		switch {
		case err == nil && page.Continue == "":
			return len(page.Items), true, nil
		case err == nil && page.RemainingItemCount != nil:
			return len(page.Items) + int(*page.RemainingItemCount), true, nil
		case err == nil:
			return 0, false, nil
		case ctx.Err() != nil:
			return 0, false, fmt.Errorf("counting %s at %s: %w", k.held.ResourceOf(), v, err)
		}
	}
	return 0, false, nil
}

// truncated reports whether a StorageReadError names fewer objects than
// the API server could not read (it names at most a hundred).
func truncated(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return true
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool { return c.Type == metav1.CauseTypeTooMany })
}

// readByName reads h at the first version whose LIST did not name it;
// found is false when it is gone, and the node nil when no version reads it.
func (s Scanner) readByName(ctx context.Context, k kind, versions []string, failed map[string][]decide.Held, h decide.Held) (*decide.Node, bool, error) {
	for _, v := range versions {
		if slices.Contains(failed[v], h) {
			continue
		}
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(k.at(v).gvk)
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

// at is k at version v.
func (k kind) at(v string) kind {
	k.gvk.Version = v
	return k
}
