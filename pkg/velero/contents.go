package velero

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// maxItem bounds one object csv-cleaner reads from a Backup's contents.
const maxItem = 4 << 20

// Where a Backup's tarball holds the objects of the CSI snapshots, by
// resource: resources/<resource>/[<version dir>/]namespaces/<ns>/<name>.json,
// or .../cluster/<name>.json for a cluster-scoped one.
const (
	claimsResource    = "persistentvolumeclaims"
	snapshotsResource = "volumesnapshots.snapshot.storage.k8s.io"
	contentsResource  = "volumesnapshotcontents.snapshot.storage.k8s.io"
)

// item is the part of a claim, VolumeSnapshot or VolumeSnapshotContent
// csv-cleaner reads from a Backup's contents.
type item struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Source struct {
			PersistentVolumeClaimName string `json:"persistentVolumeClaimName"`
		} `json:"source"`
	} `json:"spec"`
	Status struct {
		BoundVolumeSnapshotContentName string `json:"boundVolumeSnapshotContentName"`
		SnapshotHandle                 string `json:"snapshotHandle"`
		Error                          *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"status"`
}

// CSISnapshots reads from a completed Backup's contents (its tarball, as
// Velero's restore reads it) the CSI snapshot of each claim it holds
// (decide.CSISnapshotsHeld): the per-claim proof of a Backup that leaves
// the PersistentVolumes out, whose volume information has no entry for
// them. ready is false while Velero has not given the URL.
func (c Client) CSISnapshots(ctx context.Context, b *Backup, now time.Time) ([]decide.VolumeBackup, bool, error) {
	held := decide.SnapshotsHeld{Claims: map[string]string{}, Handles: map[string]string{}}
	ready, err := c.fetchWith(ctx, b, targetContents, now, func(ctx context.Context, hc *http.Client, url string) error {
		return open(ctx, hc, url, func(r io.Reader) error { return readSnapshots(r, &held) })
	})
	if errors.Is(err, errNotStored) {
		return nil, true, nil
	}
	if !ready || err != nil {
		return nil, ready, err
	}
	return decide.CSISnapshotsHeld(held), true, nil
}

// readSnapshots reads a Backup's tarball into held.
func readSnapshots(r io.Reader, held *decide.SnapshotsHeld) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the Backup's tarball: %w", err)
		}
		resource, namespace, name, ok := itemPath(h.Name)
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		var it item
		if err := json.NewDecoder(io.LimitReader(tr, maxItem)).Decode(&it); err != nil {
			return fmt.Errorf("reading %s in the Backup's tarball: %w", h.Name, err)
		}
		switch resource {
		case claimsResource:
			held.Claims[namespace+"/"+name] = it.Metadata.Annotations[decide.VolumeSnapshotAnnotation]
		case snapshotsResource:
			s := decide.SnapshotItem{Namespace: namespace, Name: name, Claim: it.Spec.Source.PersistentVolumeClaimName, Content: it.Status.BoundVolumeSnapshotContentName}
			if it.Status.Error != nil {
				s.Error = it.Status.Error.Message
			}
			// The tarball holds an object once for each version folder.
			if !slices.ContainsFunc(held.Snapshots, func(o decide.SnapshotItem) bool { return o.Namespace == namespace && o.Name == name }) {
				held.Snapshots = append(held.Snapshots, s)
			}
		case contentsResource:
			held.Handles[name] = it.Status.SnapshotHandle
		}
	}
}

// itemPath reads the resource, namespace and name of an object's file in a
// Backup's tarball; ok is false for any other file or resource.
func itemPath(name string) (resource, namespace, object string, ok bool) {
	parts := strings.Split(path.Clean(name), "/")
	if len(parts) < 4 || parts[0] != "resources" || !strings.HasSuffix(name, ".json") {
		return "", "", "", false
	}
	resource, object = parts[1], strings.TrimSuffix(parts[len(parts)-1], ".json")
	switch resource {
	case claimsResource, snapshotsResource, contentsResource:
	default:
		return "", "", "", false
	}
	if len(parts) >= 5 && parts[len(parts)-3] == "namespaces" {
		return resource, parts[len(parts)-2], object, true
	}
	if parts[len(parts)-2] == "cluster" {
		return resource, "", object, true
	}
	return "", "", "", false
}
