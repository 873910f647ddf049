// Package undoplan holds the undo's decisions (what pkg/decide is to an
// uninstall), as pure functions of what
// the undo read: what it restores of an uninstall (Restorable, Select),
// whether the operator runs beside it (OperatorRunning), the Restore to
// follow or the next attempt to make and when an Undo makes it after a
// failure (NextRestore, RetryAt), the kinds it cannot restore at the
// version the Backup holds (Unserved), the owners it links a restored
// object to again (Relink), how it judges each object before and after
// its Restore (Rows, Settle) and the phase of an Undo (JudgeUndo).
//
// Like pkg/decide, it must not import a client or read the cluster
// (.golangci.yml's rule for the decisions holds its files too).
package undoplan
