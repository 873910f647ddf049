// Package velero is csv-cleaner's client of Velero (velero.io/v1), the
// backup tool the engine's backup gate (pkg/cleanup, backup.go) asks for a
// Backup of what an uninstall deletes: it reads and creates Backups
// (backup.go), checks that a BackupStorageLocation is Available
// (location.go), and reads a Backup's resource list as `velero backup
// describe --details` does, by a DownloadRequest and its URL (list.go).
//
// Velero's objects are read and written as unstructured objects:
// csv-cleaner does not link Velero, and its CRDs may not be installed (a
// request that finds no Velero kind is a BackupUnavailable problem).
//
// It owns no decision: which phases open the gate, what the Backup holds
// and whether its list holds the plan are pkg/decide's; when to look again
// and what the record says are the engine's.
package velero
