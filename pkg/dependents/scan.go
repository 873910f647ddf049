package dependents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
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

// Listing the kinds a scan reads: this many at a time, a page of this size.
const (
	scanWorkers  = 4
	scanPageSize = 500
)

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
	// Unread are the kinds the scan could not read (plural.group), with why;
	// Forbidden among them is set when a missing right is why.
	Unread    []string
	Forbidden bool
}

// Scan reads every object of every kind the garbage collector watches
// (served with list, watch and delete), cluster-wide, but the kinds skip
// says (plural.group): the instances the uninstall lists itself, Events.
// A kind it may not list, or whose group the API server could not describe,
// is Unread: no dependent of it can be ruled out.
func (s Scanner) Scan(ctx context.Context, skip func(resource string) bool) (*Scan, error) {
	lists, err := discovery.ServerPreferredResources(s.Discovery)
	out := &Scan{}
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		for gv, e := range failed.Groups {
			out.Unread = append(out.Unread, fmt.Sprintf("every kind of %s (%v)", gv, e))
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
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(scanWorkers)
	for _, k := range kinds {
		g.Go(func() error {
			nodes, err := s.list(ctx, k)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsForbidden(err):
				out.Unread = append(out.Unread, k.held.ResourceOf()+" (forbidden)")
				out.Forbidden = true
				return nil
			case apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
				return nil // gone since discovery, or not listable after all
			case err != nil:
				return fmt.Errorf("listing %s: %w", k.held.ResourceOf(), err)
			}
			out.Nodes = append(out.Nodes, nodes...)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sort.Strings(out.Unread)
	return out, nil
}

// kind is one kind a scan lists.
type kind struct {
	gvk        schema.GroupVersionKind
	held       decide.Held
	namespaced bool
}

// list reads every object of k as metadata.
func (s Scanner) list(ctx context.Context, k kind) ([]decide.Node, error) {
	var out []decide.Node
	err := objects.ListPages(ctx, s.Reader, objects.MetadataList(k.gvk), scanPageSize, func(l *metav1.PartialObjectMetadataList) error {
		for i := range l.Items {
			out = append(out, NodeOf(k.held, &l.Items[i]))
		}
		return nil
	})
	return out, err
}

// NodeOf is an object of the kind of held as the garbage collector sees it.
func NodeOf(held decide.Held, o *metav1.PartialObjectMetadata) decide.Node {
	held.Namespace, held.Name = o.Namespace, o.Name
	n := decide.Node{Held: held, UID: o.UID, Terminating: o.DeletionTimestamp != nil}
	for _, r := range o.OwnerReferences {
		gv, _ := schema.ParseGroupVersion(r.APIVersion)
		n.Owners = append(n.Owners, decide.OwnerRef{UID: r.UID, Group: gv.Group, Kind: r.Kind, Name: r.Name})
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
