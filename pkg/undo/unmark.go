package undo

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// unmarkPatch removes decide.VeleroMustIncludeAnnotation, and nothing else.
var unmarkPatch = client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+decide.VeleroMustIncludeAnnotation+`":null}}}`))

// unmarkClaims removes decide.VeleroMustIncludeAnnotation from the claims
// restored from backup that carry it: Velero's Restore leaves it on every
// claim it makes from a CSI snapshot, and with it the next Backup of the
// claim (the uninstall of the restored install) would take the claim's
// PersistentVolume, which Velero's parallel item-block workers die of. A
// claim it may not patch keeps it: the next uninstall names it and blocks
// (ClaimMarkedByRestore) rather than crash Velero.
func unmarkClaims(ctx context.Context, c client.Client, inv *inventory, backup string) error {
	logger := logr.FromContextOrDiscard(ctx)
	for _, key := range slices.Sorted(maps.Keys(inv.claims)) {
		pvc := inv.claims[key]
		if pvc.Labels[BackupNameLabel] != backup || pvc.Annotations[decide.VeleroMustIncludeAnnotation] == "" {
			continue
		}
		logger.Info("Removing the annotation Velero's Restore left on a claim it restored, with which Velero's next Backup would take its PersistentVolume",
			"persistentVolumeClaim", client.ObjectKeyFromObject(pvc), "annotation", decide.VeleroMustIncludeAnnotation)
		switch err := c.Patch(ctx, pvc.DeepCopy(), unmarkPatch); {
		case apierrors.IsForbidden(err):
			logger.Info("Not allowed to remove the annotation: the claim's next uninstall blocks on it (ClaimMarkedByRestore) until it is removed",
				"persistentVolumeClaim", client.ObjectKeyFromObject(pvc), "error", err.Error())
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("removing %s from PersistentVolumeClaim %s: %w", decide.VeleroMustIncludeAnnotation, key, err)
		}
	}
	return nil
}
