package owninstall

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// lookEvery spaces the live LISTs of ClusterExtensions while none is
// known to be csv-cleaner's own.
const lookEvery = 30 * time.Second

// ownExtension finds and remembers the ClusterExtension that installed
// csv-cleaner (olmv1.FindSelfExtension), for an install by OLM v1, which
// sets no OPERATOR_CONDITION_NAME.
type ownExtension struct {
	reader    client.Reader // live
	namespace string

	mu       sync.Mutex
	found    *olmv1.SelfExtension
	lastLook time.Time
}

// get is csv-cleaner's own ClusterExtension, nil when none is known.
func (s *ownExtension) get(ctx context.Context) (*olmv1.SelfExtension, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found != nil || (!s.lastLook.IsZero() && time.Since(s.lastLook) < lookEvery) {
		return s.found, nil
	}
	return s.look(ctx)
}

// consider looks again at once when the extension called name, read live,
// is one csv-cleaner could have been installed by: the periodic look may
// have come just before it was created.
func (s *ownExtension) consider(ctx context.Context, name string) (*olmv1.SelfExtension, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found != nil {
		return s.found, nil
	}
	ext := &ocv1.ClusterExtension{}
	if err := s.reader.Get(ctx, client.ObjectKey{Name: name}, ext); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if c, _ := olmv1.FindSelfExtension(s.namespace, []ocv1.ClusterExtension{*ext}); c == nil {
		return nil, nil
	}
	// A candidate: only a look at all of them can tell that it is the only one.
	return s.look(ctx)
}

// look lists the ClusterExtensions live and remembers csv-cleaner's own; s.mu is held.
func (s *ownExtension) look(ctx context.Context) (*olmv1.SelfExtension, error) {
	s.lastLook = time.Now()
	list := &ocv1.ClusterExtensionList{}
	if err := s.reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing ClusterExtensions to find csv-cleaner's own: %w", err)
	}
	found, err := olmv1.FindSelfExtension(s.namespace, list.Items)
	if err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Treating no ClusterExtension as csv-cleaner's own")
		return nil, nil
	}
	if found != nil {
		logr.FromContextOrDiscard(ctx).Info("Found the ClusterExtension that installed csv-cleaner", "clusterExtension", found.Name)
	}
	s.found = found
	return found, nil
}

// name is the own extension's name, "" when none is known.
func (s *ownExtension) name() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found == nil {
		return ""
	}
	return s.found.Name
}

// WatchOwnExtension makes csv-cleaner look for the ClusterExtension that
// installed it (OLM v1 serves ClusterExtensions, and OLM v0 did not install
// it): it then holds that extension, and the extension's deletion is its
// uninstall. Called before the manager starts.
func (l *Life) WatchOwnExtension(reader client.Reader) {
	if l.Self.Name != "" || l.namespace() == "" {
		return
	}
	l.ext = &ownExtension{reader: reader, namespace: l.namespace()}
}

// IsOwnExtension reports whether ext is the ClusterExtension that installed csv-cleaner.
// Until csv-cleaner knows its own, each extension it reconciles is read
// live to see whether it could be (one GET a reconcile, none after).
func (l *Life) IsOwnExtension(ctx context.Context, ext metav1.Object) (bool, error) {
	self, err := l.ext.consider(ctx, ext.GetName())
	return self != nil && self.UID == ext.GetUID(), err
}

// extensionFate is what is happening to the ClusterExtension that
// installed csv-cleaner: its deletion, or its absence once known, is
// csv-cleaner's uninstall. OLM v1 upgrades an extension in place, so a
// deleted extension is never replaced by another version.
func (l *Life) extensionFate(ctx context.Context) (decide.SelfFate, string, error) {
	self, err := l.ext.get(ctx)
	if err != nil || self == nil {
		return decide.SelfInstalled, "", err
	}
	ext := &metav1.PartialObjectMetadata{}
	ext.SetGroupVersionKind(objects.ExtensionKind)
	switch err := l.Cached.Get(ctx, client.ObjectKey{Name: self.Name}, ext); {
	case apierrors.IsNotFound(err), err == nil && ext.UID != self.UID:
		return decide.SelfUninstalled, fmt.Sprintf("its ClusterExtension %s is gone", self.Name), nil
	case err != nil:
		return decide.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's own ClusterExtension %s: %w", self.Name, err)
	case !ext.DeletionTimestamp.IsZero():
		return decide.SelfUninstalled, fmt.Sprintf("its ClusterExtension %s is deleted", self.Name), nil
	}
	return decide.SelfInstalled, "", nil
}
