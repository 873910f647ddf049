package velero

import (
	"archive/tar"
	"bytes"
	"reflect"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestReadSnapshots reads a tarball laid out as Velero v1.18's: each object
// under its resource, once per version folder, the claims' copies annotated
// with their VolumeSnapshot; other files and resources are passed over.
func TestReadSnapshots(t *testing.T) {
	files := map[string]string{
		"metadata/version": "1.1.0",
		"resources/persistentvolumeclaims/namespaces/a/data.json":                                                `{"metadata":{"annotations":{"velero.io/volume-snapshot-name":"velero-data-x1"}}}`,
		"resources/persistentvolumeclaims/v1-preferredversion/namespaces/a/data.json":                            `{"metadata":{"annotations":{"velero.io/volume-snapshot-name":"velero-data-x1"}}}`,
		"resources/persistentvolumeclaims/namespaces/a/logs.json":                                                `{"metadata":{}}`,
		"resources/volumesnapshots.snapshot.storage.k8s.io/namespaces/a/velero-data-x1.json":                     `{"spec":{"source":{"persistentVolumeClaimName":"data"}},"status":{"boundVolumeSnapshotContentName":"snapcontent-1"}}`,
		"resources/volumesnapshots.snapshot.storage.k8s.io/v1-preferredversion/namespaces/a/velero-data-x1.json": `{"spec":{"source":{"persistentVolumeClaimName":"data"}},"status":{"boundVolumeSnapshotContentName":"snapcontent-1"}}`,
		"resources/volumesnapshotcontents.snapshot.storage.k8s.io/cluster/snapcontent-1.json":                    `{"status":{"snapshotHandle":"snap-1"}}`,
		"resources/secrets/namespaces/a/s.json":                                                                  `not read`,
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	held := decide.SnapshotsHeld{Claims: map[string]string{}, Handles: map[string]string{}}
	if err := readSnapshots(&buf, &held); err != nil {
		t.Fatal(err)
	}
	want := decide.SnapshotsHeld{Claims: map[string]string{"a/data": "velero-data-x1", "a/logs": ""},
		Snapshots: []decide.SnapshotItem{{Namespace: "a", Name: "velero-data-x1", Claim: "data", Content: "snapcontent-1"}},
		Handles:   map[string]string{"snapcontent-1": "snap-1"}}
	if !reflect.DeepEqual(held, want) {
		t.Fatalf("read %+v, want %+v", held, want)
	}
	got := decide.CSISnapshotsHeld(held)
	if len(got) != 1 || got[0].Claim != "data" || got[0].Result != "succeeded" {
		t.Fatalf("CSISnapshotsHeld = %+v, want data succeeded alone", got)
	}
}
