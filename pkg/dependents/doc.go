// Package dependents reads what the garbage collector would delete with
// an uninstall's deletions: every object of the kinds the API server serves
// with list and delete (the kinds the garbage collector watches), as
// metadata, so that pkg/decide can follow their ownerReferences (decide.Dependents),
// and what it cannot read at the version the garbage collector reads, at
// the version it is stored at (decide.JudgeUnread judges the rest);
// and, for the PersistentVolumeClaims among them, their volumes' CSI
// drivers and the VolumeSnapshotClasses Velero picks from
// (decide.DecideVolume).
//
// It owns no decision: which objects are dependents, and whether a volume
// can be snapshotted, are pkg/decide's; what the backup holds is the engine's.
// It only reads.
package dependents
