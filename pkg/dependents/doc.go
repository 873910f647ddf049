// Package dependents reads what the garbage collector would delete with
// an uninstall's deletions: every object of the kinds the API server serves
// with list and delete (the kinds the garbage collector watches), as
// metadata, so that pkg/plan can follow their ownerReferences (plan.Dependents);
// and, for the PersistentVolumeClaims among them, their volumes' CSI
// drivers and the VolumeSnapshotClasses Velero picks from
// (plan.DecideVolume).
//
// It owns no decision: which objects are dependents, and whether a volume
// can be snapshotted, are pkg/plan's; what the backup holds is the engine's.
// It only reads.
package dependents
