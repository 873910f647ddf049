package velero

import (
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

const (
	// downloadProcessed is a DownloadRequest's status.phase once its URL is there.
	downloadProcessed = "Processed"
	// downloadSlot is how long one DownloadRequest name is used: Velero's
	// URLs last 10 minutes and it deletes expired requests itself, so a
	// new slot makes a new request rather than csv-cleaner deleting one,
	// and a request of the current slot has 5 minutes left at least.
	downloadSlot = 5 * time.Minute
	// maxResourceList bounds the resource list csv-cleaner reads (gunzipped).
	maxResourceList = 256 << 20
)

// What a DownloadRequest asks Velero for (its spec.target.kind).
const (
	targetResourceList = "BackupResourceList"
	targetVolumeInfos  = "BackupVolumeInfos"
	targetContents     = "BackupContents"
	targetResults      = "BackupResults"
)

// requestName names the DownloadRequest of a Backup's target in the slot of now.
func requestName(backup, target string, now time.Time) string {
	suffix := map[string]string{targetVolumeInfos: "-volumes-", targetContents: "-contents-", targetResults: "-results-"}[target]
	return backup + cmp.Or(suffix, "-list-") + strconv.FormatInt(now.Unix()/int64(downloadSlot/time.Second), 36)
}

// listRequestName names the DownloadRequest of a Backup's resource list in
// the slot of now.
func listRequestName(backup string, now time.Time) string {
	return requestName(backup, targetResourceList, now)
}

// request asks Velero for the URL of the Backup's target (a DownloadRequest
// named for the slot of now). Ask once the Backup is Completed: Velero
// answers from its cache, and a request it reads before its cached Backup
// names the storage location it drops, unanswered for good.
func (c Client) request(ctx context.Context, backup, target string, now time.Time) error {
	dr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"target": map[string]any{"kind": target, "name": backup}}}}
	dr.SetGroupVersionKind(downloadRequestKind)
	dr.SetNamespace(c.Namespace)
	dr.SetName(requestName(backup, target, now))
	dr.SetLabels(map[string]string{ManagedByLabel: ManagedBy})
	if err := c.Writer.Create(ctx, dr); err != nil && !apierrors.IsAlreadyExists(err) {
		return absent(fmt.Errorf("asking Velero for the %s of Backup %s: %w", target, backup, err))
	}
	return nil
}

// ResourceList reads a completed Backup's resource list, as `velero backup
// describe --details` does: the URL of the DownloadRequest of this slot
// (asked for when there is none), then its gzipped JSON, a map from
// group/version/Kind to namespace/name (name for cluster-scoped objects).
// ready is false while Velero has not processed the request.
func (c Client) ResourceList(ctx context.Context, b *Backup, now time.Time) (list map[string][]string, ready bool, _ error) {
	list = map[string][]string{}
	ready, err := c.fetch(ctx, b, targetResourceList, now, &list)
	return list, ready, err
}

// volumeInfo is the part of Velero's BackupVolumeInfo the gate reads.
type volumeInfo struct {
	PVCName      string `json:"pvcName"`
	PVCNamespace string `json:"pvcNamespace"`
	BackupMethod string `json:"backupMethod"`
	Result       string `json:"result"`
	Skipped      bool   `json:"skipped"`
}

// VolumeBackups reads what a completed Backup holds of each volume: its
// BackupVolumeInfos (gzipped JSON, read as the resource list is; a Backup
// made by a Velero before v1.13 has none), and the CSI snapshots its
// contents hold (CSISnapshots), which are the proof for the claims whose
// PersistentVolume the Backup leaves out: Velero's volume information has
// no entry for those.
func (c Client) VolumeBackups(ctx context.Context, b *Backup, now time.Time) ([]decide.VolumeBackup, bool, error) {
	// Velero is asked for both at once, and the volume information is read
	// once the contents can be read too, not again at each poll meanwhile.
	if url, err := c.processed(ctx, b, targetContents, now); url == "" || err != nil {
		return nil, false, err
	}
	var infos []volumeInfo
	ready, err := c.fetch(ctx, b, targetVolumeInfos, now, &infos)
	if errors.Is(err, errNotStored) {
		infos, ready, err = nil, true, nil
	}
	if !ready || err != nil {
		return nil, ready, err
	}
	out := make([]decide.VolumeBackup, 0, len(infos))
	for _, i := range infos {
		out = append(out, decide.VolumeBackup{Namespace: i.PVCNamespace, Claim: i.PVCName, Method: i.BackupMethod, Result: i.Result, Skipped: i.Skipped})
	}
	snapshots, ready, err := c.CSISnapshots(ctx, b, now)
	if !ready || err != nil {
		return nil, ready, err
	}
	return append(out, snapshots...), true, nil
}

// fetch reads the Backup's target into into: the URL of the DownloadRequest
// of this slot (asked for when there is none), then its gzipped JSON.
func (c Client) fetch(ctx context.Context, b *Backup, target string, now time.Time, into any) (ready bool, _ error) {
	return c.fetchWith(ctx, b, target, now, func(ctx context.Context, hc *http.Client, url string) error {
		return download(ctx, hc, url, into)
	})
}

// fetchWith reads the Backup's target with read, once Velero has given
// the URL of the DownloadRequest of this slot (asked for when there is none).
func (c Client) fetchWith(ctx context.Context, b *Backup, target string, now time.Time, read func(context.Context, *http.Client, string) error) (ready bool, _ error) {
	url, err := c.processed(ctx, b, target, now)
	if url == "" || err != nil {
		return false, err
	}
	hc, err := c.httpClient(ctx, b.StorageLocation)
	if err != nil {
		return false, err
	}
	if err := read(ctx, hc, url); err != nil {
		return false, fmt.Errorf("downloading the %s of Velero's Backup %s: %w", target, b.Name, err)
	}
	return true, nil
}

// processed is the URL of the Backup's target once Velero has processed
// the DownloadRequest of this slot, "" until then (the request made when
// there is none).
func (c Client) processed(ctx context.Context, b *Backup, target string, now time.Time) (string, error) {
	dr := &unstructured.Unstructured{}
	dr.SetGroupVersionKind(downloadRequestKind)
	err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: requestName(b.Name, target, now)}, dr)
	switch {
	case apierrors.IsNotFound(err):
		return "", c.request(ctx, b.Name, target, now)
	case err != nil:
		return "", absent(fmt.Errorf("reading Velero's DownloadRequest %s/%s: %w", c.Namespace, dr.GetName(), err))
	}
	phase, _, _ := unstructured.NestedString(dr.Object, "status", "phase")
	url, _, _ := unstructured.NestedString(dr.Object, "status", "downloadURL")
	if phase != downloadProcessed {
		return "", nil
	}
	return url, nil
}

// httpClient is the client that downloads from the storage location: with
// its caCert, when it names one.
func (c Client) httpClient(ctx context.Context, location string) (*http.Client, error) {
	hc := &http.Client{Timeout: 2 * time.Minute}
	if location == "" {
		return hc, nil
	}
	l := &unstructured.Unstructured{}
	l.SetGroupVersionKind(storageLocationKind)
	if err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: location}, l); err != nil {
		return nil, fmt.Errorf("reading Velero's BackupStorageLocation %s for its CA: %w", location, err)
	}
	encoded, _, _ := unstructured.NestedString(l.Object, "spec", "objectStorage", "caCert")
	if encoded == "" {
		return hc, nil
	}
	pem, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("reading the caCert of Velero's BackupStorageLocation %s: %w", location, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the caCert of Velero's BackupStorageLocation %s holds no certificate", location)
	}
	hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return hc, nil
}

// errNotStored: the storage holds no such file.
var errNotStored = errors.New("the storage holds no such file")

// download reads gzipped JSON, served without a Content-Encoding, into into.
func download(ctx context.Context, hc *http.Client, url string, into any) error {
	return open(ctx, hc, url, func(r io.Reader) error {
		dec := json.NewDecoder(io.LimitReader(r, maxResourceList+1))
		if err := dec.Decode(into); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("larger than %d bytes, or cut short: %w", maxResourceList, err)
			}
			return fmt.Errorf("reading it: %w", err)
		}
		return nil
	})
}

// open reads a gzipped file, served without a Content-Encoding, with read.
func open(ctx context.Context, hc *http.Client, url string, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return fmt.Errorf("%w: the storage answered %s", errNotStored, resp.Status)
	default:
		return fmt.Errorf("the storage answered %s", resp.Status)
	}
	z, err := gzip.NewReader(resp.Body)
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	return read(z)
}
