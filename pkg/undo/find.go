package undo

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// found is the verified Backup of an uninstall and what it destroyed.
type found struct {
	velero    velero.Client
	backup    *velero.Backup
	destroyed *destroyed.Record
	// from says where the Backup was found.
	from string
}

// ErrNoBackup: no verified Backup of the owner's uninstall was found: nothing was restored.
var ErrNoBackup = errors.New("no verified backup")

// find finds the verified Backup of the owner's uninstall: the one its
// record names, or else, the record gone with its namespace, the newest of
// the owner's Backups (by their label) beside which what it destroyed was
// kept, in veleroNamespace.
func find(ctx context.Context, c client.Client, o decide.Owner, veleroNamespace string) (*found, error) {
	st, err := recordedBackup(ctx, c, o)
	if err != nil {
		return nil, err
	}
	if st != nil && st.Verified && st.Name != "" {
		v := velero.Client{Live: c, Writer: c, Namespace: st.Namespace}
		return backupAndDestroyed(ctx, v, st.Name, "the uninstall's record")
	}
	v := velero.Client{Live: c, Writer: c, Namespace: veleroNamespace}
	backups, err := v.Backups(ctx, o.Hash())
	if err != nil {
		return nil, err
	}
	for _, b := range backups {
		f, err := backupAndDestroyed(ctx, v, b.Name, "its labels (the uninstall's record is gone)")
		if errors.Is(err, ErrNoBackup) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("%w of the uninstall of %s: no record names one, and no Backup csv-cleaner made for it in namespace %s was verified (name Velero's namespace with --velero-namespace, or an Undo's spec.veleroNamespace, if it runs elsewhere)", ErrNoBackup, o, veleroNamespace)
}

// backupAndDestroyed reads the Backup name and what it was verified to hold.
func backupAndDestroyed(ctx context.Context, v velero.Client, name, from string) (*found, error) {
	b, err := v.Backup(ctx, name)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: Velero's Backup %s/%s, which %s names, does not exist (expired, or deleted)", ErrNoBackup, v.Namespace, name, from)
	}
	if b.Phase != decide.BackupPhaseCompleted {
		return nil, fmt.Errorf("%w: Velero's Backup %s/%s is %s", ErrNoBackup, v.Namespace, name, b.Phase)
	}
	d, err := v.ReadDestroyed(ctx, name)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("%w: nothing csv-cleaner verified is kept beside Velero's Backup %s/%s (ConfigMap %s)", ErrNoBackup, v.Namespace, name, velero.DestroyedName(name))
	}
	return &found{velero: v, backup: b, destroyed: d, from: from}, nil
}

// recordedBackup is the backup the owner's uninstall record names; nil
// when there is no record (its namespace went with it) or no backup.
func recordedBackup(ctx context.Context, c client.Client, o decide.Owner) (*cleanupv1alpha1.BackupStatus, error) {
	rec, key := cleanupv1alpha1.NewRecord(o.Extension()), client.ObjectKey{Namespace: o.Namespace, Name: o.Name}
	if o.Extension() {
		key.Namespace = ""
	}
	if err := c.Get(ctx, key, rec); err != nil {
		return nil, ignoreAbsent(err)
	}
	return rec.Uninstall().Backup, nil
}

// ignoreAbsent is nil for a record that does not exist, or whose kind is not installed.
func ignoreAbsent(err error) error {
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("reading the uninstall's record: %w", err)
}
