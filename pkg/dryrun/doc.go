// Package dryrun is what an uninstall would delete and keep as the cluster
// is now (DryRun): the items, what could not be read, the dependents and
// their volumes, and the foresight of what the run would be refused (the
// access reviews, server-side dry-run deletes, the backup gate's Velero and
// rights). `csv-cleaner plan` prints it (pkg/report); the backup gate plans
// its Backup with it.
//
// It must not write anything but access reviews and dry-run requests, nor
// import the engine, the gate or a controller.
package dryrun
