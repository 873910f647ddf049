package velero

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// restoreKind is Velero's Restore.
var restoreKind = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Restore"}

// Velero's Restore phases that end it.
const (
	RestoreCompleted       = "Completed"
	RestorePartiallyFailed = "PartiallyFailed"
	RestoreFailed          = "Failed"
	RestoreFailedValidate  = "FailedValidation"
)

// AttemptLabel numbers the Restores an undo makes of the same objects
// from one Backup: 2 is the one made after the first failed.
const AttemptLabel = "cleanup.csv-cleaner.io/attempt"

// Restore is a Velero Restore as the undo follows it.
type Restore struct {
	Name  string
	Phase string
	// Attempt is its AttemptLabel; 1 when it has none (the first, or made
	// before attempts were counted).
	Attempt int
	// Restored and Total are its progress (status.progress).
	Restored, Total  int64
	Warnings, Errors int64
	// FailureReason and ValidationErrors say why it failed.
	FailureReason    string
	ValidationErrors []string
	// Created is when it was made; Completed, when it ended (zero before,
	// or when Velero did not say).
	Created, Completed time.Time
}

// Ended reports whether the Restore is over.
func (r *Restore) Ended() bool {
	switch r.Phase {
	case RestoreCompleted, RestorePartiallyFailed, RestoreFailed, RestoreFailedValidate:
		return true
	}
	return false
}

// Failed reports whether the Restore ended without restoring what it was
// made for: Velero refused it (FailedValidation: its storage location was
// unavailable, say) or stopped (Failed). Velero never tries one again.
func (r *Restore) Failed() bool {
	return r.Phase == RestoreFailed || r.Phase == RestoreFailedValidate
}

// Why says why a failed Restore failed, as Velero says it.
func (r *Restore) Why() string {
	why := slices.Clone(r.ValidationErrors)
	if r.FailureReason != "" {
		why = append(why, r.FailureReason)
	}
	if len(why) == 0 {
		return "Velero gave no reason (velero restore describe " + r.Name + " --details, velero restore logs " + r.Name + ")"
	}
	return strings.Join(why, "; ")
}

// RestoreSpec is what a Restore of the undo restores.
type RestoreSpec struct {
	// Backup is the Backup it restores from (b.UID owns its policy ConfigMap).
	Backup *Backup
	// Objects are exactly what it restores (RestorePolicy).
	Objects []decide.Held
	// Excluded are resources (plural.group) it never restores.
	Excluded []string
}

// CreateRestore makes the Restore called name of spec, attempt attempt,
// with its resource policy in a ConfigMap of the same name owned by the
// Backup. One that exists already is the same Restore (another undo made
// it at the same moment): it is not an error.
func (c Client) CreateRestore(ctx context.Context, name string, attempt int, owner decide.Owner, spec RestoreSpec) error {
	policy, err := RestorePolicy(spec.Objects)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: labelsOf(owner), Annotations: annotationsOf(owner),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: backupKind.GroupVersion().String(), Kind: backupKind.Kind, Name: spec.Backup.Name, UID: spec.Backup.UID}}},
		Data: map[string]string{"policy": policy}}
	if err := c.Writer.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the resource policy of Velero's Restore %s/%s: %w", c.Namespace, name, err)
	}
	var namespaces []string
	cluster := false
	for _, o := range spec.Objects {
		switch {
		case o.Namespace == "":
			cluster = true
		case !slices.Contains(namespaces, o.Namespace):
			namespaces = append(namespaces, o.Namespace)
		}
	}
	slices.Sort(namespaces)
	if len(namespaces) == 0 {
		// A Restore of cluster-scoped objects alone names Velero's own
		// namespace, whose objects its policy leaves out, so that no
		// namespace of the Backup is restored.
		namespaces = []string{c.Namespace}
	}
	r := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"backupName":              spec.Backup.Name,
		"includedNamespaces":      toAny(namespaces),
		"excludedResources":       toAny(spec.Excluded),
		"includeClusterResources": cluster,
		"restorePVs":              true,
		"resourcePolicy":          map[string]any{"kind": "configmap", "name": name},
	}}}
	r.SetGroupVersionKind(restoreKind)
	r.SetNamespace(c.Namespace)
	r.SetName(name)
	labels := labelsOf(owner)
	labels[AttemptLabel] = strconv.Itoa(max(attempt, 1))
	r.SetLabels(labels)
	r.SetAnnotations(annotationsOf(owner))
	if err := c.Writer.Create(ctx, r); err != nil && !apierrors.IsAlreadyExists(err) {
		return absent(fmt.Errorf("creating Velero's Restore %s/%s: %w", c.Namespace, name, err))
	}
	return nil
}

// Restore reads the Restore called name; nil when there is none.
func (c Client) Restore(ctx context.Context, name string) (*Restore, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(restoreKind)
	switch err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, u); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, absent(fmt.Errorf("reading Velero's Restore %s/%s: %w", c.Namespace, name, err))
	}
	return restoreOf(u), nil
}

// restoreOf is the Restore u as the undo follows it.
func restoreOf(u *unstructured.Unstructured) *Restore {
	r := &Restore{Name: u.GetName(), Attempt: 1, Created: u.GetCreationTimestamp().Time}
	if n, err := strconv.Atoi(u.GetLabels()[AttemptLabel]); err == nil && n > 1 {
		r.Attempt = n
	}
	r.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	r.Restored, _, _ = unstructured.NestedInt64(u.Object, "status", "progress", "itemsRestored")
	r.Total, _, _ = unstructured.NestedInt64(u.Object, "status", "progress", "totalItems")
	r.Warnings, _, _ = unstructured.NestedInt64(u.Object, "status", "warnings")
	r.Errors, _, _ = unstructured.NestedInt64(u.Object, "status", "errors")
	r.FailureReason, _, _ = unstructured.NestedString(u.Object, "status", "failureReason")
	r.ValidationErrors, _, _ = unstructured.NestedStringSlice(u.Object, "status", "validationErrors")
	if done, _, _ := unstructured.NestedString(u.Object, "status", "completionTimestamp"); done != "" {
		r.Completed, _ = time.Parse(time.RFC3339, done)
	}
	return r
}

// Restores are the Restores csv-cleaner made from the Backup backup for
// the owner of hash (decide.Owner.Hash), the oldest first: an undo follows
// one under way rather than make a second (an undo interrupted and run
// again, or two undos of one uninstall), and numbers its next attempt
// after those that ended.
func (c Client) Restores(ctx context.Context, hash, backup string) ([]*Restore, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(restoreKind.GroupVersion().WithKind("RestoreList"))
	if err := c.Live.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{ManagedByLabel: ManagedBy, OwnerLabel: hash}); err != nil {
		return nil, absent(fmt.Errorf("listing Velero's Restores in %s: %w", c.Namespace, err))
	}
	var out []*Restore
	for i := range list.Items {
		u := &list.Items[i]
		if from, _, _ := unstructured.NestedString(u.Object, "spec", "backupName"); from == backup {
			out = append(out, restoreOf(u))
		}
	}
	slices.SortStableFunc(out, func(a, b *Restore) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out, nil
}
