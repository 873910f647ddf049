// Package csidriver is the tests' own CSI driver, served on a Unix socket
// to external-provisioner and csi-snapshotter: a volume is a directory, a
// snapshot a gzipped tarball of one, and a volume made from a snapshot its
// extraction. Its state is on disk, so a test reads and writes a volume's
// bytes through the PersistentVolume's volumeHandle (VolumePath) with no
// kubelet and no mount.
//
// It serves the Identity service, the Controller service (create and
// delete volumes and snapshots, ListSnapshots, which Velero's restore of a
// pre-provisioned snapshot needs, ValidateVolumeCapabilities) and
// NodeGetInfo. It must not be used outside tests: nothing is isolated and
// capacity is not enforced.
package csidriver
