package velero

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
)

// destroyedKey is the ConfigMap's key: gzipped JSON, or a part of it.
const destroyedKey = "destroyed.json.gz"

// ConfigMapBytes is the most of csv-cleaner's gzipped JSON one ConfigMap
// holds (a ConfigMap holds 1 MiB at most); PartsAnnotation, on the first
// part of a record of what an uninstall destroyed, says how many
// ConfigMaps hold it.
const (
	ConfigMapBytes  = 900 << 10
	PartsAnnotation = "cleanup.csv-cleaner.io/parts"
)

// DestroyedName is the ConfigMap that keeps what the uninstall that
// Backup gated destroys; the parts after the first of a large one are
// DestroyedName-2, -3, ...
func DestroyedName(backup string) string { return backup + "-destroyed" }

// partName is the ConfigMap of part i (from 1).
func partName(backup string, i int) string {
	if i == 1 {
		return DestroyedName(backup)
	}
	return fmt.Sprintf("%s-%d", DestroyedName(backup), i)
}

// split cuts b into parts of at most size bytes (one, when it is empty).
func split(b []byte, size int) [][]byte {
	var out [][]byte
	for len(b) > size {
		out, b = append(out, b[:size]), b[size:]
	}
	return append(out, b)
}

// KeepDestroyed writes d beside the verified Backup b, owned by it, in as
// many ConfigMaps as it takes, the first last: a reader finds the parts it
// names; one written already (by a pass whose reply was lost) is replaced.
func (c Client) KeepDestroyed(ctx context.Context, b *Backup, owner decide.Owner, d *destroyed.Record) error {
	gz, err := destroyed.Encode(d)
	if err != nil {
		return err
	}
	parts := split(gz, ConfigMapBytes)
	for i := len(parts); i >= 1; i-- {
		annotations := annotationsOf(owner)
		if i == 1 && len(parts) > 1 {
			annotations[PartsAnnotation] = strconv.Itoa(len(parts))
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: partName(b.Name, i),
			Labels: labelsOf(owner), Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: backupKind.GroupVersion().String(), Kind: backupKind.Kind, Name: b.Name, UID: b.UID}}},
			BinaryData: map[string][]byte{destroyedKey: parts[i-1]}}
		if err := c.Put(ctx, cm); err != nil {
			return fmt.Errorf("keeping what the uninstall destroys in ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return nil
}

// Put creates cm in Velero's namespace (csv-cleaner's ConfigMaps there:
// what an uninstall destroyed, an Undo's rows), or replaces the one there.
func (c Client) Put(ctx context.Context, cm *corev1.ConfigMap) error {
	err := c.Writer.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		old := &corev1.ConfigMap{}
		if err := c.Live.Get(ctx, client.ObjectKeyFromObject(cm), old); err != nil {
			return fmt.Errorf("reading it: %w", err)
		}
		cm.ResourceVersion = old.ResourceVersion
		err = c.Writer.Update(ctx, cm)
	}
	return err
}

// ReadDestroyed reads what the uninstall the Backup gated destroyed; nil
// when nothing was kept (the Backup was never verified).
func (c Client) ReadDestroyed(ctx context.Context, backup string) (*destroyed.Record, error) {
	var gz []byte
	for i, n := 1, 1; i <= n; i++ {
		cm := &corev1.ConfigMap{}
		switch err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: partName(backup, i)}, cm); {
		case apierrors.IsNotFound(err) && i == 1:
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", c.Namespace, partName(backup, i), err)
		}
		if i == 1 {
			if parts, err := strconv.Atoi(cm.Annotations[PartsAnnotation]); err == nil && parts > 1 {
				n = parts
			}
		}
		gz = append(gz, cm.BinaryData[destroyedKey]...)
	}
	d, err := destroyed.Decode(gz, maxResourceList)
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", c.Namespace, DestroyedName(backup), err)
	}
	return d, nil
}

// Backups are the Backups csv-cleaner made for the owner of hash
// (decide.OwnerHash), newest first.
func (c Client) Backups(ctx context.Context, hash string) ([]Backup, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(backupKind.GroupVersion().WithKind("BackupList"))
	if err := c.Live.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{ManagedByLabel: ManagedBy, OwnerLabel: hash}); err != nil {
		return nil, absent(fmt.Errorf("listing Velero's Backups in %s: %w", c.Namespace, err))
	}
	out := make([]Backup, 0, len(list.Items))
	for _, b := range list.Items {
		out = append(out, Backup{Name: b.Name, UID: b.UID, Created: b.CreationTimestamp.Time})
	}
	slices.SortFunc(out, func(a, b Backup) int { return b.Created.Compare(a.Created) })
	return out, nil
}
