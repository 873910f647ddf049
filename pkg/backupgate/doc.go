// Package backupgate is the backup gate: the first step of an uninstall
// whose policy asks for a backup. It makes one Velero Backup per attempt of
// what the uninstall destroys (the instances, its other deletions, their
// dependents and the claims' volumes), plans the uninstall while Velero
// runs, waits for the Backup, verifies it against the plan, keeps beside it
// what the uninstall destroys (pkg/destroyed) and only then opens.
//
// The engine hands it the pass as read (Pass) and writes what the pass came
// to (Outcome) into the record: the gate holds no pointer into the record.
// It must not import the engine nor
// decide what pkg/decide can decide: the Backup's name, content, phases,
// retries and verification are pkg/decide's.
package backupgate
