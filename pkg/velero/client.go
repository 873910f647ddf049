package velero

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Velero's kinds (velero.io/v1).
var (
	backupKind          = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Backup"}
	downloadRequestKind = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "DownloadRequest"}
	storageLocationKind = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "BackupStorageLocation"}
)

// Client reads and writes Velero's objects in its namespace.
type Client struct {
	// Live reads from the API server, never from a cache: the gate decides on what it reads.
	Live client.Reader
	// Writer creates Backups and DownloadRequests (nil for a client that only reads: `plan`).
	Writer client.Writer
	// Namespace is Velero's.
	Namespace string
}

// Unavailable is the problem of a Velero that cannot take the backup.
func Unavailable(object, format string, args ...any) *decide.Problem {
	return &decide.Problem{Reason: cleanupv1alpha1.BlockedBackupUnavailable, Object: object, Message: fmt.Sprintf(format, args...)}
}

// absent turns a request that found no Velero kind into the problem that
// says so; other errors are returned as they are.
func absent(err error) error {
	if meta.IsNoMatchError(err) {
		return Unavailable("Velero", "the policy asks for a Velero backup, but Velero's CRDs (velero.io/v1) are not installed: %v; install Velero, or remove backup from the policy to uninstall without one", err)
	}
	return err
}

// Right is one right csv-cleaner uses in Velero's namespace.
type Right struct{ Verb, Group, Resource string }

// Rights are the rights the gate uses in Velero's namespace, the ones
// manifests/velero/role.yaml grants: `plan` asks whether they are held.
var Rights = []Right{
	{"create", "velero.io", "backups"}, {"get", "velero.io", "backups"},
	{"create", "velero.io", "downloadrequests"}, {"get", "velero.io", "downloadrequests"},
	{"get", "velero.io", "backupstoragelocations"}, {"list", "velero.io", "backupstoragelocations"},
	{"create", "", "configmaps"}, {"get", "", "configmaps"}, {"update", "", "configmaps"},
}
