package csvcontroller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// ConsoleKind is the OpenShift console operator's configuration: one
// object, cluster, whose spec.plugins are the enabled ConsolePlugins.
var ConsoleKind = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Console"}

// consoleName is the console operator configuration's name.
const consoleName = "cluster"

// +kubebuilder:rbac:groups=operator.openshift.io,resources=consoles,verbs=get;patch,resourceNames=cluster

// consolePluginStep takes the CSV's ConsolePlugins out of the console's
// enabled plugins, as the console's own uninstall does, whatever the
// policy keeps: only where the console operator's API exists, only the
// plugins the CSV's console.openshift.io/plugins annotation names, and not
// one that another live CSV names too. A malformed annotation disables
// nothing, with a Warning Event.
func (r *Reconciler) consolePluginStep(ctx context.Context, u *cleanup.Uninstall, csv *operatorsv1alpha1.ClusterServiceVersion) (bool, error) {
	ours, err := decide.ConsolePlugins(csv.Annotations[objects.ConsolePluginsAnnotation])
	if err != nil {
		u.Event(corev1.EventTypeWarning, "ConsolePluginsMalformed", "Uninstall", "%s; no console plugin is disabled", err)
		return true, nil
	}
	if len(ours) == 0 {
		return true, nil
	}
	var removed []string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		console := &unstructured.Unstructured{}
		console.SetGroupVersionKind(ConsoleKind)
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: consoleName}, console); err != nil {
			return err
		}
		enabled, _, err := unstructured.NestedStringSlice(console.Object, "spec", "plugins")
		if err != nil {
			return fmt.Errorf("reading the console's enabled plugins: %w", err)
		}
		others, err := r.pluginsOfOthers(ctx, csv, ours)
		if err != nil {
			return err
		}
		var kept []string
		if kept, removed = decide.PluginsToDisable(enabled, ours, others); removed == nil {
			return nil
		}
		base := console.DeepCopy()
		if err := unstructured.SetNestedStringSlice(console.Object, kept, "spec", "plugins"); err != nil {
			return err
		}
		logr.FromContextOrDiscard(ctx).Info("Disabling the operator's console plugins", "plugins", removed)
		return r.Client.Patch(ctx, console, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	switch {
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return true, nil // not OpenShift, or no console: nothing to disable
	case err != nil:
		return false, fmt.Errorf("disabling the console plugins %v: %w", ours, err)
	case removed != nil:
		u.Event(corev1.EventTypeNormal, "ConsolePluginsDisabled", "Uninstall", "Disabled the operator's console plugins %v", removed)
	}
	return true, nil
}

// pluginsOfOthers are the ConsolePlugins that the other live, non-copied
// CSVs name, read live as metadata, a page at a time.
// A malformed annotation counts as naming every one of ours its text mentions.
func (r *Reconciler) pluginsOfOthers(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, ours []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := objects.ListPages(ctx, r.APIReader, objects.CSVMetadataList, func(page *metav1.PartialObjectMetadataList) error {
		for i := range page.Items {
			other := &page.Items[i]
			if other.UID == csv.UID || !other.DeletionTimestamp.IsZero() {
				continue
			}
			annotation := other.Annotations[objects.ConsolePluginsAnnotation]
			names, err := decide.ConsolePlugins(annotation)
			if err != nil {
				// Malformed: every plugin its text mentions counts as named, the safe side.
				names = slices.DeleteFunc(slices.Clone(ours), func(n string) bool { return !strings.Contains(annotation, n) })
			}
			for _, n := range names {
				out[n] = true
			}
		}
		return nil
	}, notCopied())
	if err != nil {
		return nil, fmt.Errorf("listing CSVs for their console plugins: %w", err)
	}
	return out, nil
}
