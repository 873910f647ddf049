package cleanup

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
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// Velero's kinds (velero.io/v1), read and written as unstructured objects:
// csv-cleaner does not link Velero, and its CRDs may not be installed.
var (
	veleroBackup          = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Backup"}
	veleroDownloadRequest = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "DownloadRequest"}
	veleroStorageLocation = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "BackupStorageLocation"}
)

// Labels and annotations of the Backups csv-cleaner makes.
const (
	backupManagedByLabel    = "app.kubernetes.io/managed-by"
	backupOwnerUIDLabel     = "cleanup.csv-cleaner.io/owner-uid"
	backupOwnerAnnotation   = "cleanup.csv-cleaner.io/owner"
	backupManagedByCSVClean = "csv-cleaner"
	// storageLocationAvailable is an Available BackupStorageLocation's status.phase.
	storageLocationAvailable = "Available"
	// downloadProcessed is a DownloadRequest's status.phase once its URL is there.
	downloadProcessed = "Processed"
	// downloadSlot is how long one DownloadRequest name is used: Velero's
	// URLs last 10 minutes and it deletes expired requests itself, so a
	// new slot makes a new request rather than csv-cleaner deleting one.
	downloadSlot = 5 * time.Minute
	// maxResourceList bounds the resource list csv-cleaner reads (gunzipped).
	maxResourceList = 256 << 20
)

// velero reads and writes Velero's objects in its namespace, live.
type velero struct {
	live      client.Reader
	writer    client.Client
	namespace string
}

// veleroOf is the Velero of the policy's backup settings.
func (e *Engine) veleroOf(v *cleanupv1alpha1.VeleroBackup) velero {
	return velero{live: e.APIReader, writer: e.Client, namespace: v.Namespace}
}

// unavailable is the problem of a Velero that cannot take the backup.
func unavailable(object, format string, args ...any) *plan.Problem {
	return &plan.Problem{Reason: cleanupv1alpha1.BlockedBackupUnavailable, Object: object, Message: fmt.Sprintf(format, args...)}
}

// absent turns a request that found no Velero kind into the problem that
// says so; other errors are returned as they are.
func (v velero) absent(err error) error {
	if meta.IsNoMatchError(err) {
		return unavailable("Velero", "the policy asks for a Velero backup, but Velero's CRDs (velero.io/v1) are not installed: %v; install Velero, or remove backup from the policy to uninstall without one", err)
	}
	return err
}

// backup reads the Backup called name; nil when there is none.
func (v velero) backup(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(veleroBackup)
	err := v.live.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, v.absent(fmt.Errorf("reading Velero's Backup %s/%s: %w", v.namespace, name, err))
	}
	return b, nil
}

// storageLocation checks that the BackupStorageLocation called name (the
// default location when name is empty) is Available, before a Backup is
// made there: a problem when it is not, or does not exist.
func (v velero) storageLocation(ctx context.Context, name string) (*plan.Problem, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(veleroStorageLocation.GroupVersion().WithKind(veleroStorageLocation.Kind + "List"))
	if err := v.live.List(ctx, list, client.InNamespace(v.namespace)); err != nil {
		return nil, v.absent(fmt.Errorf("listing Velero's BackupStorageLocations in %s: %w", v.namespace, err))
	}
	var found *unstructured.Unstructured
	for i := range list.Items {
		l := &list.Items[i]
		isDefault, _, _ := unstructured.NestedBool(l.Object, "spec", "default")
		if l.GetName() == name || name == "" && isDefault {
			found = l
			break
		}
	}
	what := "default BackupStorageLocation"
	if name != "" {
		what = "BackupStorageLocation " + name
	}
	if found == nil {
		return unavailable("Velero", "Velero has no %s in namespace %s: nothing is deleted without a backup; create it, or name another in the policy's backup.velero.storageLocation", what, v.namespace), nil
	}
	phase, _, _ := unstructured.NestedString(found.Object, "status", "phase")
	if phase != storageLocationAvailable {
		msg, _, _ := unstructured.NestedString(found.Object, "status", "message")
		return unavailable("BackupStorageLocation "+found.GetName(), "Velero's %s (%s) is %q, not Available: %s; nothing is deleted without a backup", what, found.GetName(), phase, msg), nil
	}
	return nil, nil
}

// createBackup makes the Backup called name, of content, for the owner.
// One that exists already (made by an earlier pass whose reply was lost,
// or by another csv-cleaner) is the same Backup: it is not an error.
func (v velero) createBackup(ctx context.Context, name string, owner Owner, content plan.BackupContent, s *cleanupv1alpha1.VeleroBackup) error {
	b := &unstructured.Unstructured{Object: map[string]any{}}
	b.SetGroupVersionKind(veleroBackup)
	b.SetNamespace(v.namespace)
	b.SetName(name)
	b.SetLabels(map[string]string{backupManagedByLabel: backupManagedByCSVClean, backupOwnerUIDLabel: string(owner.Object().GetUID())})
	b.SetAnnotations(map[string]string{backupOwnerAnnotation: owner.Title()})
	spec := map[string]any{"includedResources": toAny(content.Resources)}
	if len(content.Namespaces) > 0 {
		spec["includedNamespaces"] = toAny(content.Namespaces)
	}
	if content.ClusterScoped {
		spec["includeClusterResources"] = true
	}
	if s.StorageLocation != "" {
		spec["storageLocation"] = s.StorageLocation
	}
	if s.TTL != nil {
		spec["ttl"] = s.TTL.Duration.String()
	}
	if s.SnapshotVolumes != nil {
		spec["snapshotVolumes"] = *s.SnapshotVolumes
	}
	b.Object["spec"] = spec
	if err := v.writer.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		return v.absent(fmt.Errorf("creating Velero's Backup %s/%s: %w", v.namespace, name, err))
	}
	return nil
}

// toAny is a []string as unstructured content holds it.
func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// resourceList reads a completed Backup's resource list, as `velero backup
// describe --details` does: a DownloadRequest of kind BackupResourceList
// (made when there is none in this slot), then its URL's gzipped JSON.
// ready is false while Velero has not processed the request.
func (v velero) resourceList(ctx context.Context, backup *unstructured.Unstructured, now time.Time) (list map[string][]string, ready bool, _ error) {
	name := backup.GetName() + "-list-" + strconv.FormatInt(now.Unix()/int64(downloadSlot/time.Second), 36)
	dr := &unstructured.Unstructured{}
	dr.SetGroupVersionKind(veleroDownloadRequest)
	err := v.live.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: name}, dr)
	if apierrors.IsNotFound(err) {
		dr = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"target": map[string]any{"kind": "BackupResourceList", "name": backup.GetName()}}}}
		dr.SetGroupVersionKind(veleroDownloadRequest)
		dr.SetNamespace(v.namespace)
		dr.SetName(name)
		dr.SetLabels(map[string]string{backupManagedByLabel: backupManagedByCSVClean})
		if err := v.writer.Create(ctx, dr); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, false, v.absent(fmt.Errorf("asking Velero for the resource list of Backup %s: %w", backup.GetName(), err))
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, v.absent(fmt.Errorf("reading Velero's DownloadRequest %s/%s: %w", v.namespace, name, err))
	}
	phase, _, _ := unstructured.NestedString(dr.Object, "status", "phase")
	url, _, _ := unstructured.NestedString(dr.Object, "status", "downloadURL")
	if phase != downloadProcessed || url == "" {
		return nil, false, nil
	}
	hc, err := v.httpClient(ctx, backup)
	if err != nil {
		return nil, false, err
	}
	list, err = download(ctx, hc, url)
	if err != nil {
		return nil, false, fmt.Errorf("downloading the resource list of Velero's Backup %s: %w", backup.GetName(), err)
	}
	return list, true, nil
}

// httpClient is the client that downloads from the Backup's storage
// location: with its caCert, when it names one.
func (v velero) httpClient(ctx context.Context, backup *unstructured.Unstructured) (*http.Client, error) {
	hc := &http.Client{Timeout: 2 * time.Minute}
	location, _, _ := unstructured.NestedString(backup.Object, "spec", "storageLocation")
	if location == "" {
		return hc, nil
	}
	l := &unstructured.Unstructured{}
	l.SetGroupVersionKind(veleroStorageLocation)
	if err := v.live.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: location}, l); err != nil {
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
	body := io.LimitReader(z, maxResourceList+1)
	dec := json.NewDecoder(body)
	if err := dec.Decode(&list); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("the resource list is larger than %d bytes, or cut short: %w", maxResourceList, err)
		}
		return nil, fmt.Errorf("reading the resource list: %w", err)
	}
	return list, nil
}
