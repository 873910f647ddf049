package velero

import (
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

// listRequestName names the DownloadRequest of a Backup's resource list in
// the slot of now.
func listRequestName(backup string, now time.Time) string {
	return backup + "-list-" + strconv.FormatInt(now.Unix()/int64(downloadSlot/time.Second), 36)
}

// requestList asks Velero for the URL of the Backup's resource list (a
// DownloadRequest of kind BackupResourceList named for the slot of now).
// Ask once the Backup is Completed: Velero answers from its cache, and a
// request it reads before its cached Backup names the storage location it
// drops, unanswered for good.
func (c Client) requestList(ctx context.Context, backup string, now time.Time) error {
	dr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"target": map[string]any{"kind": "BackupResourceList", "name": backup}}}}
	dr.SetGroupVersionKind(downloadRequestKind)
	dr.SetNamespace(c.Namespace)
	dr.SetName(listRequestName(backup, now))
	dr.SetLabels(map[string]string{ManagedByLabel: ManagedBy})
	if err := c.Writer.Create(ctx, dr); err != nil && !apierrors.IsAlreadyExists(err) {
		return absent(fmt.Errorf("asking Velero for the resource list of Backup %s: %w", backup, err))
	}
	return nil
}

// ResourceList reads a completed Backup's resource list, as `velero backup
// describe --details` does: the URL of the DownloadRequest of this slot
// (asked for when there is none), then its gzipped JSON, a map from
// group/version/Kind to namespace/name (name for cluster-scoped objects).
// ready is false while Velero has not processed the request.
func (c Client) ResourceList(ctx context.Context, b *Backup, now time.Time) (list map[string][]string, ready bool, _ error) {
	dr := &unstructured.Unstructured{}
	dr.SetGroupVersionKind(downloadRequestKind)
	err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: listRequestName(b.Name, now)}, dr)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, c.requestList(ctx, b.Name, now)
	case err != nil:
		return nil, false, absent(fmt.Errorf("reading Velero's DownloadRequest %s/%s: %w", c.Namespace, dr.GetName(), err))
	}
	phase, _, _ := unstructured.NestedString(dr.Object, "status", "phase")
	url, _, _ := unstructured.NestedString(dr.Object, "status", "downloadURL")
	if phase != downloadProcessed || url == "" {
		return nil, false, nil
	}
	hc, err := c.httpClient(ctx, b.StorageLocation)
	if err != nil {
		return nil, false, err
	}
	list, err = download(ctx, hc, url)
	if err != nil {
		return nil, false, fmt.Errorf("downloading the resource list of Velero's Backup %s: %w", b.Name, err)
	}
	return list, true, nil
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

// download reads a resource list: gzipped JSON, served without a
// Content-Encoding, a map from group/version/Kind to namespace/name.
func download(ctx context.Context, hc *http.Client, url string) (map[string][]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the storage answered %s", resp.Status)
	}
	z, err := gzip.NewReader(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	list := map[string][]string{}
	dec := json.NewDecoder(io.LimitReader(z, maxResourceList+1))
	if err := dec.Decode(&list); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("the resource list is larger than %d bytes, or cut short: %w", maxResourceList, err)
		}
		return nil, fmt.Errorf("reading the resource list: %w", err)
	}
	return list, nil
}
