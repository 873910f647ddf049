package velero

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// Labels and annotations of the Backups and DownloadRequests csv-cleaner makes.
const (
	ManagedByLabel  = "app.kubernetes.io/managed-by"
	ManagedBy       = "csv-cleaner"
	OwnerUIDLabel   = "cleanup.csv-cleaner.io/owner-uid"
	OwnerAnnotation = "cleanup.csv-cleaner.io/owner"
)

// Backup is a Velero Backup as the gate reads it.
type Backup struct {
	Name string
	// Phase is status.phase ("" before Velero has looked at it).
	Phase string
	// Items is how many items Velero has backed up so far.
	Items int64
	// Created is when the Backup was made.
	Created time.Time
	// StorageLocation is spec.storageLocation (Velero sets the default's name).
	StorageLocation string
}

// Owner is who a Backup is made for: the uninstall's owner.
type Owner struct {
	UID   types.UID
	Title string
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
	b := &Backup{Name: name, Created: u.GetCreationTimestamp().Time}
	b.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	b.Items, _, _ = unstructured.NestedInt64(u.Object, "status", "progress", "itemsBackedUp")
	b.StorageLocation, _, _ = unstructured.NestedString(u.Object, "spec", "storageLocation")
	return b, nil
}

// CreateBackup makes the Backup called name, of content, for owner. One
// that exists already (made by an earlier pass whose reply was lost, or by
// another csv-cleaner) is the same Backup: it is not an error.
func (c Client) CreateBackup(ctx context.Context, name string, owner Owner, content plan.BackupContent, s *cleanupv1alpha1.VeleroBackup) error {
	b := &unstructured.Unstructured{Object: map[string]any{}}
	b.SetGroupVersionKind(backupKind)
	b.SetNamespace(c.Namespace)
	b.SetName(name)
	b.SetLabels(map[string]string{ManagedByLabel: ManagedBy, OwnerUIDLabel: string(owner.UID)})
	b.SetAnnotations(map[string]string{OwnerAnnotation: owner.Title})
	spec := map[string]any{"includedResources": toAny(content.Resources)}
	if len(content.Namespaces) > 0 {
		spec["includedNamespaces"] = toAny(content.Namespaces)
	}
	if content.ClusterScoped {
		spec["includeClusterResources"] = true
	}
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
	if err := c.Writer.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		return absent(fmt.Errorf("creating Velero's Backup %s/%s: %w", c.Namespace, name, err))
	}
	return nil
}

// toAny is a []string as unstructured content holds it.
func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
