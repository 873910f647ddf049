package velero

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Labels and annotations of the Backups, ConfigMaps and DownloadRequests
// csv-cleaner makes: OwnerLabel finds an owner's Backups by its kind,
// namespace and name (decide.OwnerHash) when its record is gone.
const (
	ManagedByLabel  = "app.kubernetes.io/managed-by"
	ManagedBy       = "csv-cleaner"
	OwnerUIDLabel   = "cleanup.csv-cleaner.io/owner-uid"
	OwnerLabel      = "cleanup.csv-cleaner.io/owner"
	OwnerAnnotation = "cleanup.csv-cleaner.io/owner"
)

// Backup is a Velero Backup as the gate reads it.
type Backup struct {
	Name string
	UID  types.UID
	// Phase is status.phase ("" before Velero has looked at it).
	Phase string
	// Items is how many items Velero has backed up so far.
	Items int64
	// Created is when the Backup was made.
	Created time.Time
	// StorageLocation is spec.storageLocation (Velero sets the default's name).
	StorageLocation string
	// Errors, FailureReason and ValidationErrors are what its status says
	// of a Backup that failed.
	Errors           int64
	FailureReason    string
	ValidationErrors []string
}

// labelsOf are the labels of the Backups (and what they own) made for
// the uninstall of owner.
func labelsOf(owner decide.Owner) map[string]string {
	return map[string]string{ManagedByLabel: ManagedBy, OwnerUIDLabel: string(owner.UID), OwnerLabel: owner.Hash()}
}

// annotationsOf name owner for a person on what is made for its uninstall.
func annotationsOf(owner decide.Owner) map[string]string {
	return map[string]string{OwnerAnnotation: owner.String()}
}

// Backup reads the Backup called name; nil when there is none.
func (c Client) Backup(ctx context.Context, name string) (*Backup, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(backupKind)
	err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, absent(fmt.Errorf("reading Velero's Backup %s/%s: %w", c.Namespace, name, err))
	}
	b := &Backup{Name: name, UID: u.GetUID(), Created: u.GetCreationTimestamp().Time}
	b.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	b.Items, _, _ = unstructured.NestedInt64(u.Object, "status", "progress", "itemsBackedUp")
	b.StorageLocation, _, _ = unstructured.NestedString(u.Object, "spec", "storageLocation")
	b.Errors, _, _ = unstructured.NestedInt64(u.Object, "status", "errors")
	b.FailureReason, _, _ = unstructured.NestedString(u.Object, "status", "failureReason")
	b.ValidationErrors, _, _ = unstructured.NestedStringSlice(u.Object, "status", "validationErrors")
	return b, nil
}

// CreateBackup makes the Backup called name, of content, for owner, with
// its resource policy in a ConfigMap of the same name (made first: Velero
// reads it when it validates the Backup), which the Backup then owns, so
// that it goes when Velero deletes the Backup. One that exists already
// (made by an earlier pass whose reply was lost, or by another
// csv-cleaner) is the same Backup: it is not an error.
func (c Client) CreateBackup(ctx context.Context, name string, owner decide.Owner, content decide.BackupContent, s *cleanupv1alpha1.VeleroBackup) error {
	policy, namespaces, err := BackupPolicy(content, c.Namespace, name)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: labelsOf(owner), Annotations: annotationsOf(owner)},
		Data: map[string]string{"policy": policy}}
	if err := c.Writer.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the resource policy of Velero's Backup %s/%s: %w", c.Namespace, name, err)
	}
	b := &unstructured.Unstructured{Object: map[string]any{}}
	b.SetGroupVersionKind(backupKind)
	b.SetNamespace(c.Namespace)
	b.SetName(name)
	b.SetLabels(labelsOf(owner))
	b.SetAnnotations(annotationsOf(owner))
	spec := map[string]any{"includedNamespaces": toAny(namespaces),
		"resourcePolicy": map[string]any{"kind": "configmap", "name": name}}
	if s.StorageLocation != "" {
		spec["storageLocation"] = s.StorageLocation
	}
	if s.TTL != nil {
		spec["ttl"] = s.TTL.Duration.String()
	}
	if s.SnapshotVolumes != nil {
		spec["snapshotVolumes"] = *s.SnapshotVolumes
	}
	b.Object["spec"] = spec
	switch err := c.Writer.Create(ctx, b); {
	case apierrors.IsAlreadyExists(err):
		if err := c.Live.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return absent(fmt.Errorf("reading Velero's Backup %s/%s: %w", c.Namespace, name, err))
		}
	case err != nil:
		return absent(fmt.Errorf("creating Velero's Backup %s/%s: %w", c.Namespace, name, err))
	}
	return c.ownedByBackup(ctx, cm, b.GetName(), b.GetUID())
}

// OwnPolicy makes the resource policy of the Backup b owned by it, as
// CreateBackup does: the pass that verifies the Backup asks again, for a
// pass that made the Backup and was refused that write, or lost its reply.
// A policy that is gone has nothing to own.
func (c Client) OwnPolicy(ctx context.Context, b *Backup) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: b.Name}}
	return client.IgnoreNotFound(c.ownedByBackup(ctx, cm, b.Name, b.UID))
}

// ownedByBackup makes the ConfigMap cm (as created, or read again) owned by
// the Backup name of uid: the garbage collector deletes it with the Backup.
func (c Client) ownedByBackup(ctx context.Context, cm *corev1.ConfigMap, name string, uid types.UID) error {
	ref := metav1.OwnerReference{APIVersion: backupKind.GroupVersion().String(), Kind: backupKind.Kind, Name: name, UID: uid}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Live.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return fmt.Errorf("reading ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		if slices.ContainsFunc(cm.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == ref.UID }) {
			return nil
		}
		cm.OwnerReferences = append(cm.OwnerReferences, ref)
		if err := c.Writer.Update(ctx, cm); err != nil {
			return fmt.Errorf("making ConfigMap %s/%s owned by its Backup: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	})
}

// toAny is a []string as unstructured content holds it.
func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
