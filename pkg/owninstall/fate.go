package owninstall

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// Fate says what is happening to csv-cleaner's own install
// (decide.DecideSelf), or, installed by OLM v1, to its ClusterExtension; both
// controllers ask. docs/own-uninstall.md says what it reads and remembers.
func (l *Life) Fate(ctx context.Context) (decide.SelfFate, string, error) {
	ns := l.namespace()
	if ns == "" {
		return decide.SelfInstalled, "", nil
	}
	namespace := &corev1.Namespace{}
	if err := l.Cached.Get(ctx, client.ObjectKey{Name: ns}, namespace); err != nil && !apierrors.IsNotFound(err) {
		return decide.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's namespace %s: %w", ns, err)
	}
	if !namespace.DeletionTimestamp.IsZero() {
		fate, why := decide.DecideSelf(decide.SelfInput{Self: l.Self, NamespaceTerminating: true})
		return fate, why, nil
	}
	if l.Self.Name == "" {
		return l.extensionFate(ctx)
	}
	self := objects.CSVMetadata()
	err := l.Cached.Get(ctx, l.Self, self)
	if err != nil && !apierrors.IsNotFound(err) {
		return decide.SelfInstalled, "", fmt.Errorf("getting csv-cleaner's own CSV %s: %w", l.Self, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && self.DeletionTimestamp.IsZero() {
		// Installed (again, after a reinstall): what was seen before is over.
		l.seen, l.why = decide.SelfInstalled, ""
		return decide.SelfInstalled, "", nil
	}
	if l.seen != decide.SelfInstalled {
		return l.seen, l.why, nil
	}
	in, err := readInput(ctx, l.Live, l.Self, ns)
	if err != nil {
		return decide.SelfInstalled, "", err
	}
	fate, why := decide.DecideSelf(in)
	if fate != decide.SelfInstalled {
		logr.FromContextOrDiscard(ctx).Info("csv-cleaner's own CSV is being deleted", "self", l.Self, "fate", fate.String(), "why", why)
		l.seen, l.why = fate, why
	}
	return fate, why, nil
}

// readInput reads with reader what decide.DecideSelf needs.
func readInput(ctx context.Context, reader client.Reader, self types.NamespacedName, namespace string) (decide.SelfInput, error) {
	in := decide.SelfInput{Self: self}
	if namespace == "" {
		return in, nil
	}
	// A namespace that is not there is not read as terminating: a pod's own
	// namespace is deleted only after its pods, so it means a POD_NAMESPACE
	// that names no namespace, which must not release everything.
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); client.IgnoreNotFound(err) != nil {
		return in, fmt.Errorf("getting csv-cleaner's namespace %s: %w", namespace, err)
	}
	in.NamespaceTerminating = !ns.DeletionTimestamp.IsZero()
	if self.Name == "" || in.NamespaceTerminating {
		return in, nil
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	switch err := reader.Get(ctx, self, csv); {
	case err == nil:
		in.CSV = csv
	case !apierrors.IsNotFound(err):
		return in, fmt.Errorf("getting csv-cleaner's own CSV %s: %w", self, err)
	}
	siblings := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := reader.List(ctx, siblings, client.InNamespace(self.Namespace)); err != nil {
		return in, fmt.Errorf("listing CSVs in %s: %w", self.Namespace, err)
	}
	in.Siblings = siblings.Items
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := reader.List(ctx, subs, client.InNamespace(self.Namespace)); err != nil && !apierrors.IsNotFound(err) {
		return in, fmt.Errorf("listing Subscriptions in %s: %w", self.Namespace, err)
	}
	in.Subscriptions = subs.Items
	return in, nil
}
