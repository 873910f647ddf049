// Package undo undoes an uninstall that csv-cleaner gated on a verified
// Velero backup: it finds the Backup and the record of what the uninstall
// destroyed, and, while the operator does not run and Velero's storage
// location is Available, restores with one Velero Restore exactly what is
// missing (or the part a selection picks) at versions the API server
// serves, follows it, links what it restored to its owners again, takes
// off the claims it restored the annotation Velero's Restore leaves on
// them (unmark.go) and checks what came back; after a Restore that failed, it makes the next
// attempt, never following the failed one. It takes one step at a time
// (for the Undo controller), goes to the end, or goes through an Undo
// object (for the CLI).
//
// It must not decide (pkg/undoplan does) nor write anything but the
// Restore, its policy, the ownerReferences of what was restored, that
// annotation of the claims it restored and the CLI's Undo object.
package undo
