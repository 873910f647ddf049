// Package velero is csv-cleaner's client of Velero (velero.io/v1), read and
// written as unstructured objects (csv-cleaner does not link Velero, and
// its CRDs may not be installed): Backups with their resource policies, a
// storage location's availability, a Backup's resource list and volumes
// (as `velero backup describe --details` reads them), the record of what
// an uninstall destroyed kept beside its Backup, and Restores.
//
// It owns no decision (pkg/decide's) and must not import the gate, the
// engine or the undo.
package velero
