package decide

import (
	"fmt"
	"strings"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// How Velero picks the VolumeSnapshotClass of a volume's CSI driver
// (velero.io/v1, pkg/util/csi GetVolumeSnapshotClass).
const (
	// SnapshotClassPVCAnnotation on a claim names the class to use.
	SnapshotClassPVCAnnotation = "velero.io/csi-volumesnapshot-class"
	// SnapshotClassLabel marks the class Velero uses for its driver.
	SnapshotClassLabel = "velero.io/csi-volumesnapshot-class"
	// SnapshotClassDefaultAnnotation marks the driver's default class.
	SnapshotClassDefaultAnnotation = "snapshot.storage.kubernetes.io/is-default-class"
)

// SnapshotClass is a VolumeSnapshotClass as Velero chooses among them.
type SnapshotClass struct {
	Name, Driver string
	// Labelled carries SnapshotClassLabel; Default, SnapshotClassDefaultAnnotation.
	Labelled, Default bool
}

// VolumeInput is what DecideVolume reads of one claim the uninstall destroys.
type VolumeInput struct {
	Claim Node
	// ClassAnnotation is the claim's SnapshotClassPVCAnnotation, if any.
	ClassAnnotation string
	// Bound: the claim is bound to its volume (status.phase Bound).
	Bound bool
	// Driver is its PersistentVolume's CSI driver ("" when the volume is
	// not CSI); VolumeFound says whether the volume was found.
	Driver      string
	VolumeFound bool
	Classes     []SnapshotClass
	// SnapshotVolumes is the policy's backup.velero.snapshotVolumes.
	SnapshotVolumes *bool
	VolumeData      cleanupv1alpha1.VolumeData
	// MarkedByRestore: the claim carries VeleroMustIncludeAnnotation "true".
	MarkedByRestore bool
}

// VeleroMustIncludeAnnotation is the annotation by which Velero's CSI action
// tells Velero's server to take a claim's additional items, its
// PersistentVolume among them, whatever the Backup leaves out. Velero
// v1.18.3 writes it into the Backup's copy of every claim it snapshots, and
// its Restore puts it on the claim it makes: the next Backup of that claim
// takes its PersistentVolume, which Velero's parallel item-block workers
// record at once and die of (docs/backup.md).
const VeleroMustIncludeAnnotation = "backup.velero.io/must-include-additional-items"

// Volume is one claim the uninstall destroys and what its backup holds of it.
type Volume struct {
	Claim      Held   `json:"claim"`
	VolumeName string `json:"volume,omitempty"`
	Driver     string `json:"driver,omitempty"`
	// SnapshotClass is the VolumeSnapshotClass Velero snapshots it with.
	SnapshotClass string `json:"snapshotClass,omitempty"`
	// Snapshot: the backup must hold a completed snapshot of its data.
	Snapshot bool `json:"snapshot"`
	// Note says why it has no snapshot, when it has none.
	Note string `json:"note,omitempty"`
	// Problem blocks the uninstall (VolumeNotSnapshottable).
	Problem *Problem `json:"-"`
}

// DecideVolume decides what the backup must hold of a claim the uninstall
// destroys: a completed CSI snapshot when Velero can take one, nothing for an
// unbound claim; else it blocks (VolumeNotSnapshottable) unless volumeData is
// ObjectsOnly.
func DecideVolume(in VolumeInput) Volume {
	v := Volume{Claim: in.Claim.Held, VolumeName: in.Claim.VolumeName, Driver: in.Driver}
	if !in.Bound || in.Claim.VolumeName == "" {
		v.Note = "not bound to a volume: no data to back up"
		return v
	}
	if in.MarkedByRestore {
		v.Note = "blocks (" + cleanupv1alpha1.BlockedClaimMarkedByRestore + "): it carries " + VeleroMustIncludeAnnotation
		v.Problem = &Problem{Reason: cleanupv1alpha1.BlockedClaimMarkedByRestore, Object: "PersistentVolumeClaim " + in.Claim.Namespace + "/" + in.Claim.Name,
			Message: fmt.Sprintf("PersistentVolumeClaim %s/%s carries the annotation %s: \"true\", which a Velero Restore left on it; with it Velero's Backup takes the claim's PersistentVolume %s whatever the Backup leaves out, and Velero v1.18 dies of that (concurrent map writes) at more than one item-block worker. Nothing is backed up or deleted until it is gone: kubectl -n %s annotate persistentvolumeclaim %s %s- (csv-cleaner undo removes it from the claims it restores)",
				in.Claim.Namespace, in.Claim.Name, VeleroMustIncludeAnnotation, in.Claim.VolumeName, in.Claim.Namespace, in.Claim.Name, VeleroMustIncludeAnnotation)}
		return v
	}
	var why string
	switch {
	case in.SnapshotVolumes != nil && !*in.SnapshotVolumes:
		why = "the policy's backup.velero.snapshotVolumes is false"
	case !in.VolumeFound:
		why = fmt.Sprintf("its PersistentVolume %s was not found", in.Claim.VolumeName)
	case in.Driver == "":
		why = fmt.Sprintf("its PersistentVolume %s is not a CSI volume: Velero's CSI snapshots cannot hold its data", in.Claim.VolumeName)
	default:
		class, err := snapshotClassFor(in.Driver, in.ClassAnnotation, in.Classes)
		if err == "" {
			v.SnapshotClass, v.Snapshot = class, true
			return v
		}
		why = err
	}
	if in.VolumeData == cleanupv1alpha1.VolumeDataObjectsOnly {
		v.Note = "object only (volumeData: ObjectsOnly): " + why
		return v
	}
	v.Note = "blocks (" + cleanupv1alpha1.BlockedVolumeNotSnapshottable + "): " + why
	v.Problem = &Problem{Reason: cleanupv1alpha1.BlockedVolumeNotSnapshottable, Object: "PersistentVolumeClaim " + in.Claim.Namespace + "/" + in.Claim.Name,
		Message: fmt.Sprintf("the uninstall destroys PersistentVolumeClaim %s/%s and its volume's data, which no backup can hold: %s; give its CSI driver a VolumeSnapshotClass labelled %s: \"true\", or set the policy's backup.velero.volumeData: ObjectsOnly to accept a backup of its object alone",
			in.Claim.Namespace, in.Claim.Name, why, SnapshotClassLabel)}
	return v
}

// snapshotClassFor picks the VolumeSnapshotClass Velero would use for
// driver: the claim's annotation's, else the one labelled for Velero, else
// the default, else the only one; or says why there is none.
func snapshotClassFor(driver, annotated string, classes []SnapshotClass) (string, string) {
	var forDriver []SnapshotClass
	for _, c := range classes {
		if c.Driver == driver {
			forDriver = append(forDriver, c)
		}
	}
	if annotated != "" {
		for _, c := range classes {
			if strings.EqualFold(c.Name, annotated) {
				if c.Driver != driver {
					return "", fmt.Sprintf("its annotation %s names VolumeSnapshotClass %s, which is not for its driver %s", SnapshotClassPVCAnnotation, annotated, driver)
				}
				return c.Name, ""
			}
		}
	}
	for _, pick := range []func(SnapshotClass) bool{
		func(c SnapshotClass) bool { return c.Labelled },
		func(c SnapshotClass) bool { return c.Default },
	} {
		for _, c := range forDriver {
			if pick(c) {
				return c.Name, ""
			}
		}
	}
	if len(forDriver) == 1 {
		return forDriver[0].Name, ""
	}
	if len(forDriver) == 0 {
		return "", fmt.Sprintf("its CSI driver %s has no VolumeSnapshotClass", driver)
	}
	return "", fmt.Sprintf("its CSI driver %s has %d VolumeSnapshotClasses and none is labelled %s or is the default", driver, len(forDriver), SnapshotClassLabel)
}

// VolumeBackup is what a Backup holds of one claim's volume, as Velero's
// volume information (BackupVolumeInfos) says.
type VolumeBackup struct {
	Namespace, Claim string
	// Method is CSISnapshot, NativeSnapshot or PodVolumeBackup.
	Method string
	// Result is succeeded or failed; Skipped says the volume was not backed up.
	Result  string
	Skipped bool
}

// VerifyVolumes checks that a completed Backup holds a snapshot of the
// data of every volume that needs one: a volume backup of its claim that
// succeeded, by any of Velero's methods. It returns the problem that
// blocks when one lacks it (BackupIncomplete, naming the first claim).
func VerifyVolumes(name string, held []VolumeBackup, volumes []Volume) *Problem {
	ok := map[string]bool{}
	for _, h := range held {
		if !h.Skipped && h.Result == "succeeded" && h.Method != "" {
			ok[h.Namespace+"/"+h.Claim] = true
		}
	}
	var missing []string
	for _, v := range volumes {
		if v.Snapshot && !ok[v.Claim.Namespace+"/"+v.Claim.Name] {
			missing = append(missing, v.Claim.Namespace+"/"+v.Claim.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &Problem{Reason: cleanupv1alpha1.BlockedBackupIncomplete, Object: "PersistentVolumeClaim " + missing[0],
		Message: fmt.Sprintf("Velero's Backup %s completed without a snapshot of %d of the %d volumes the uninstall would destroy (first: PersistentVolumeClaim %s): nothing is destroyed that no backup holds (velero backup describe %s --details)",
			name, len(missing), Snapshots(volumes), missing[0], name)}
}

// Snapshots counts the volumes whose data a backup must hold a snapshot of.
func Snapshots(volumes []Volume) int {
	n := 0
	for _, v := range volumes {
		if v.Snapshot {
			n++
		}
	}
	return n
}
