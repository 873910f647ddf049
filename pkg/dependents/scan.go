package dependents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// scanWorkers is how many kinds a scan lists at a time.
const scanWorkers = 4

// Scanner reads, live, the objects among which an uninstall's dependents are.
type Scanner struct {
	// Discovery tells the kinds the API server serves and their verbs.
	Discovery discovery.DiscoveryInterface
	// Reader lists them as metadata and reads claims and volumes, live.
	Reader client.Reader
}

// Scan is what one scan read.
type Scan struct {
	// Nodes are every object read, with its owners.
	Nodes []decide.Node
	// Unread are the kinds of which it could not read every object, with
	// where and why (pkg/decide judges whether they concern an uninstall).
	Unread []decide.UnreadKind
}

// Forbidden reports whether csv-cleaner may not list some kind.
func (s *Scan) Forbidden() bool {
	return slices.ContainsFunc(s.Unread, func(u decide.UnreadKind) bool { return u.Reason == decide.UnreadForbidden })
}

// Scan reads every object of every kind the garbage collector watches
// (served with list, watch and delete), cluster-wide, but the kinds skip
// says (plural.group): the instances the uninstall lists itself, Events.
// A kind it may not list, whose objects the API server cannot read, or
// whose API does not answer is Unread, never an error: of a kind whose
// objects the API server cannot all read, it reads what it can
// (readAround).
func (s Scanner) Scan(ctx context.Context, skip func(resource string) bool) (*Scan, error) {
	lists, err := discovery.ServerPreferredResources(s.Discovery)
	out := &Scan{}
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		for gv, e := range failed.Groups {
			if decide.ServesNoOwnedObjects(gv.Group) {
				continue
			}
			out.Unread = append(out.Unread, decide.UnreadKind{Resource: "every kind of " + gv.String(), Reason: decide.UnreadUnavailable, Namespaced: true, Anywhere: true, Error: e.Error()})
		}
	case err != nil:
		return nil, fmt.Errorf("reading the kinds the API server serves: %w", err)
	}
	var kinds []kind
	for _, l := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "watch", "delete"}}, lists) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			k := kind{gvk: gv.WithKind(r.Kind), held: decide.Held{Group: gv.Group, Kind: r.Kind, Resource: r.Name}, namespaced: r.Namespaced}
			if strings.Contains(r.Name, "/") || skip(k.held.ResourceOf()) {
				continue
			}
			kinds = append(kinds, k)
		}
	}
	var mu sync.Mutex
	var storeFailed []storeFailure
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scanWorkers)
	for _, k := range kinds {
		g.Go(func() error {
			nodes, err := s.list(gctx, k, "")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				out.Nodes = append(out.Nodes, nodes...)
				return nil
			}
			switch u, ok := unreadOf(k, err); {
			case gctx.Err() != nil:
				return fmt.Errorf("listing %s: %w", k.held.ResourceOf(), err)
			case !ok:
				// gone since discovery, or not listable after all
			case u.Reason == decide.UnreadStorage:
				storeFailed = append(storeFailed, storeFailure{k, err})
			default:
				out.Unread = append(out.Unread, u)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, f := range storeFailed {
		nodes, u, err := s.readAround(ctx, f.kind, f.err, namespacesOf(out.Nodes))
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, nodes...)
		out.Unread = append(out.Unread, u)
	}
	slices.SortFunc(out.Unread, func(a, b decide.UnreadKind) int { return strings.Compare(a.Resource, b.Resource) })
	return out, nil
}

// namespacesOf are the names of the Namespaces among nodes.
func namespacesOf(nodes []decide.Node) []string {
	var out []string
	for _, n := range nodes {
		if n.Group == "" && n.Resource == "namespaces" {
			out = append(out, n.Name)
		}
	}
	return out
}

// unreadOf is what a failed LIST of k says about its objects; false when
// it says there are none to read (the kind is gone, or not listable).
func unreadOf(k kind, err error) (decide.UnreadKind, bool) {
	u := decide.UnreadKind{Resource: k.held.ResourceOf(), Namespaced: k.namespaced, Error: err.Error()}
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
		return u, false
	case apierrors.IsForbidden(err):
		u.Reason = decide.UnreadForbidden
	case storeReadError(err):
		u.Reason = decide.UnreadStorage
	default:
		u.Reason = decide.UnreadUnavailable
	}
	u.Anywhere = u.Reason != decide.UnreadStorage
	return u, true
}

// CorruptObjects are the objects of the kind of held that a StorageReadError
// names: each cause's field is the object's storage key, which ends in
// namespace/name (name, for a cluster-scoped kind).
func CorruptObjects(held decide.Held, namespaced bool, err error) []decide.Held {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []decide.Held
	for _, c := range status.Status().Details.Causes {
		parts := strings.Split(strings.Trim(c.Field, "/"), "/")
		if c.Field == "" || len(parts) < 2 {
			continue
		}
		o := held
		o.Name = parts[len(parts)-1]
		if namespaced {
			o.Namespace = parts[len(parts)-2]
		}
		out = append(out, o)
	}
	return out
}

// kind is one kind a scan lists.
type kind struct {
	gvk        schema.GroupVersionKind
	held       decide.Held
	namespaced bool
}

// list reads every object of k as metadata, in namespace ns ("" for all).
func (s Scanner) list(ctx context.Context, k kind, ns string) ([]decide.Node, error) {
	var out []decide.Node
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	err := objects.ListPages(ctx, s.Reader, objects.MetadataList(k.gvk), func(l *metav1.PartialObjectMetadataList) error {
		for i := range l.Items {
			out = append(out, NodeOf(k.held, &l.Items[i]))
		}
		return nil
	}, opts...)
	return out, err
}

// NodeOf is an object of the kind of held as the garbage collector sees it.
func NodeOf(held decide.Held, o *metav1.PartialObjectMetadata) decide.Node {
	held.Namespace, held.Name = o.Namespace, o.Name
	n := decide.Node{Held: held, UID: o.UID, Terminating: o.DeletionTimestamp != nil}
	for _, r := range o.OwnerReferences {
		gv, _ := schema.ParseGroupVersion(r.APIVersion)
		n.Owners = append(n.Owners, decide.OwnerRef{UID: r.UID, Group: gv.Group, Kind: r.Kind, Name: r.Name,
			APIVersion: r.APIVersion, Controller: r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion})
	}
	return n
}

// Helds are the nodes' objects, without the kinds a controller makes again
// (decide.Regenerated): what a backup must hold of them.
func Helds(nodes []decide.Node) []decide.Held {
	var out []decide.Held
	for _, n := range nodes {
		if !decide.Regenerated(n.ResourceOf()) {
			out = append(out, n.Held)
		}
	}
	return slices.Clip(out)
}
