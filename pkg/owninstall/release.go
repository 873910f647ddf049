package owninstall

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// Released is one object whose csv-cleaner finalizers were removed.
type Released struct {
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Name       string   `json:"name"`
	Finalizers []string `json:"finalizers"`
	// Abandoned: a CSV whose uninstall was under way; what it had not deleted stays.
	Abandoned bool `json:"abandoned,omitempty"`
}

func (r Released) String() string {
	key := r.Name
	if r.Namespace != "" {
		key = r.Namespace + "/" + r.Name
	}
	return fmt.Sprintf("%s %s: removed %v", r.Kind, key, r.Finalizers)
}

// Releaser removes every finalizer csv-cleaner placed: its finalizer (and
// legacy names) from CSVs and ClusterExtensions and the RBAC hold from ClusterRoles and bindings,
// found live. It is what csv-cleaner's own uninstall does, in its reconcile,
// on SIGTERM when its namespace is going, and in `csv-cleaner release`.
type Releaser struct {
	// Live lists and re-reads the objects; Writer patches them and writes Events.
	Live   client.Reader
	Writer client.Writer
	// Finalizers are the CSV finalizer names to remove.
	Finalizers decide.Finalizers
	// Hold is the RBAC hold finalizer to remove.
	Hold string
	// Self is csv-cleaner's own CSV (empty name outside OLM): ReleaseOthers
	// leaves it and its RBAC to ReleaseSelf, which releases them last.
	Self types.NamespacedName
	// SelfExtension is the ClusterExtension that installed csv-cleaner ("" when
	// none): ReleaseOthers leaves it to the caller, which releases it last.
	SelfExtension string
	// Workers is how many patches are in flight at once.
	Workers int
	// Reporter names csv-cleaner in the Events about abandoned uninstalls.
	Reporter string
}

// ReleaseOthers removes csv-cleaner's finalizers from every CSV but its own
// and the hold from every ClusterRole and binding but its version's, in a
// random order so that replicas share the work. It goes on past a refused
// patch and returns every error with what it released.
func (rl Releaser) ReleaseOthers(ctx context.Context) ([]Released, error) {
	var todo []metav1.PartialObjectMetadata
	err := objects.ListPages(ctx, rl.Live, objects.CSVMetadataList, func(l *metav1.PartialObjectMetadataList) error {
		for _, csv := range l.Items {
			if rl.Finalizers.HeldBy(csv.Finalizers) && objects.Key(&csv) != rl.Self {
				csv.SetGroupVersionKind(objects.CSVKind)
				todo = append(todo, csv)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing CSVs: %w", err)
	}
	// OLM v1's ClusterExtensions, where the API server serves them.
	err = objects.ListPages(ctx, rl.Live, objects.MetadataList(objects.ExtensionKind), func(l *metav1.PartialObjectMetadataList) error {
		for _, ext := range l.Items {
			if rl.Finalizers.HeldBy(ext.Finalizers) && ext.Name != rl.SelfExtension {
				ext.SetGroupVersionKind(objects.ExtensionKind)
				todo = append(todo, ext)
			}
		}
		return nil
	})
	if err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing ClusterExtensions: %w", err)
	}
	for _, gvk := range rbac.HeldKinds {
		err := objects.ListPages(ctx, rl.Live, objects.MetadataList(gvk), func(l *metav1.PartialObjectMetadataList) error {
			for _, o := range l.Items {
				owner, _ := rbac.OwnerOf(o.Labels)
				if slices.Contains(o.Finalizers, rl.Hold) && (rl.Self.Name == "" || owner != rl.Self) {
					o.SetGroupVersionKind(gvk)
					todo = append(todo, o)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", rbac.KindName(gvk), err)
		}
	}
	rand.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	return rl.releaseAll(ctx, todo)
}

// releaseAll patches the objects with Workers in flight. What fails only
// transiently, past the client's retries in place (a degraded API server),
// goes again after a pause, until ctx ends: the release must finish within
// its timeout, and no csv-cleaner may run afterwards to finish it.
func (rl Releaser) releaseAll(ctx context.Context, todo []metav1.PartialObjectMetadata) ([]Released, error) {
	var (
		out     []Released
		earlier []error // what earlier passes could not do for good
	)
	for {
		got, again, errs := rl.releasePass(ctx, todo)
		out = append(out, got...)
		if len(again) == 0 || ctx.Err() != nil {
			return out, errors.Join(append(earlier, errs...)...)
		}
		for _, err := range errs {
			if !transient.Is(err) {
				earlier = append(earlier, err)
			}
		}
		logr.FromContextOrDiscard(ctx).Info("Releasing again what the API server failed to answer", "objects", len(again))
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		todo = again
	}
}

// releasePass patches the objects once, with Workers in flight; again are
// those whose patch failed transiently.
func (rl Releaser) releasePass(ctx context.Context, todo []metav1.PartialObjectMetadata) (out []Released, again []metav1.PartialObjectMetadata, errs []error) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	work := make(chan *metav1.PartialObjectMetadata)
	for range max(1, rl.Workers) {
		wg.Go(func() {
			for obj := range work {
				rel, err := rl.releaseOne(ctx, obj)
				mu.Lock()
				if rel != nil {
					out = append(out, *rel)
				}
				if err != nil {
					errs = append(errs, err)
				}
				if transient.Is(err) {
					again = append(again, *obj)
				}
				mu.Unlock()
			}
		})
	}
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- &todo[i]
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, fmt.Errorf("releasing %d objects: %w", len(todo)-len(out), err))
	}
	return out, again, errs
}

// releaseOne removes csv-cleaner's finalizers from one object (a CSV, or a
// held ClusterRole or binding); nil when there were none by then.
func (rl Releaser) releaseOne(ctx context.Context, obj *metav1.PartialObjectMetadata) (*Released, error) {
	gvk := obj.GroupVersionKind()
	ours := finalizer.Is(rl.Hold)
	if gvk == objects.CSVKind || gvk == objects.ExtensionKind {
		ours = rl.Finalizers.Ours
	}
	var removed []string
	changed, err := finalizer.Patch(ctx, rl.Live, rl.Writer, obj, func(o *metav1.PartialObjectMetadata) []string {
		removed = slices.DeleteFunc(slices.Clone(o.Finalizers), func(f string) bool { return !ours(f) })
		if len(removed) == 0 {
			return nil
		}
		return finalizer.Without(o.Finalizers, ours)
	})
	if err != nil {
		return nil, fmt.Errorf("removing csv-cleaner's finalizers from %s %s: %w", rbac.KindName(gvk), client.ObjectKeyFromObject(obj), err)
	}
	if !changed {
		return nil, nil
	}
	rel := &Released{Kind: gvk.Kind, Namespace: obj.Namespace, Name: obj.Name, Finalizers: removed}
	if (gvk == objects.CSVKind || gvk == objects.ExtensionKind) && !obj.DeletionTimestamp.IsZero() && client.ObjectKeyFromObject(obj) != rl.Self {
		rel.Abandoned = true
		rl.abandoned(ctx, obj)
	}
	return rel, nil
}

// ReleaseSelf removes csv-cleaner's finalizer from its own CSV, then the
// hold from its own version's ClusterRoles and bindings, in the order that
// keeps its rights to the last patch (rbac.Holder.ReleaseSelf). It returns
// how many objects it changed.
func (rl Releaser) ReleaseSelf(ctx context.Context) (int, error) {
	if rl.Self.Name == "" {
		return 0, nil
	}
	n := 0
	self := objects.CSVMetadata()
	switch err := rl.Live.Get(ctx, rl.Self, self); {
	case err == nil:
		rel, err := rl.releaseOne(ctx, self)
		if err != nil {
			return 0, err
		}
		if rel != nil {
			n++
		}
	case !apierrors.IsNotFound(err):
		return 0, fmt.Errorf("getting csv-cleaner's own CSV %s: %w", rl.Self, err)
	}
	held, err := rbac.Holder{Lister: rl.Live, Live: rl.Live, Writer: rl.Writer, Finalizer: rl.Hold}.ReleaseSelf(ctx, rl.Self)
	return n + held, rbac.HoldError(err)
}

// abandoned writes a Warning Event on a CSV (or a ClusterExtension) whose
// uninstall csv-cleaner gives up because csv-cleaner itself is uninstalled.
// The Event is written directly, not through a recorder, so that it is sent
// before the process exits. A failure is only logged: the release matters
// more.
func (rl Releaser) abandoned(ctx context.Context, obj *metav1.PartialObjectMetadata) {
	now := time.Now()
	gvk, ns, record := obj.GroupVersionKind(), obj.Namespace, "CSVCleanup"
	if ns == "" { // a ClusterExtension: its Events are in the default namespace
		ns, record = metav1.NamespaceDefault, "ExtensionCleanup"
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%x", obj.Name, now.UnixNano())},
		EventTime:  metav1.NewMicroTime(now),
		Regarding: corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion},
		Type: corev1.EventTypeWarning, Reason: "UninstallAbandoned", Action: "Release",
		Note: "csv-cleaner is being uninstalled and removed its finalizer: this uninstall is abandoned, " +
			"and what it had not deleted yet (see the " + record + " record) stays",
		ReportingController: "csv-cleaner",
		ReportingInstance:   rl.Reporter,
	}
	if err := rl.Writer.Create(ctx, ev); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Writing the Event about an abandoned uninstall", "object", klog.KObj(obj))
	}
}

// reporter is the instance name in Events: the pod's name, which is its hostname.
func reporter() string {
	if h, err := os.Hostname(); err == nil {
		return "csv-cleaner-" + h
	}
	return "csv-cleaner"
}
