// Package report prints what csv-cleaner's commands found and did: a plan
// (PlanTable, PlanJSON), an undo (UndoTable, UndoJSON) and the progress
// lines of a Restore and of an Undo. Its JSON has lower-case keys, the
// same as the API's; docs/plan.md and docs/backup.md document them.
//
// It only formats: it must not read the cluster or decide anything.
package report
