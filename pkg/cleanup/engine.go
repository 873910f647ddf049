package cleanup

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/csv-cleaner/csv-cleaner/pkg/backupgate"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/revision"
)

// Engine is what every owner's uninstall shares: the record, attempts and
// their backoff, the deletion of CRDs' instances, the deletion's revision,
// refusals and access reviews, Events and metrics. Each controller opens an
// Uninstall of its Owner on it for one pass.
type Engine struct {
	// Client reads from the cache and writes to the API server, each write
	// retried in place while it fails transiently (Retry).
	Client client.Client
	// APIReader reads live from the API server, for every decision that deletes something.
	APIReader client.Reader
	// Metadata, when set, deletes instances (see deleteOne).
	Metadata metadata.Interface
	// Discovery tells the kinds the API server serves, for the backup
	// gate's scan of an uninstall's dependents.
	Discovery discovery.DiscoveryInterface
	// Recorder writes Events.
	Recorder events.EventRecorder
	// Finalizers names the finalizer (and legacy names) this instance places
	// on what it uninstalls.
	Finalizers decide.Finalizers
	// DeleteWorkers is how many deletes one uninstall has in flight; the
	// client's rate limit still applies.
	DeleteWorkers int
	// UndoCommand is how a person undoes the uninstall of an owner (the
	// CLI's command line), which the messages of a backed-up uninstall say.
	UndoCommand func(decide.Owner) string

	// failures counts each owner's failed attempts in a row and spaces them
	// (failureBackoff, SettleAttempt).
	failures workqueue.TypedRateLimiter[reconcile.Request]
	// starts serialises the starts of each uninstall's record (Start).
	starts startTurns
	// pending are the records' statuses that a pass could not write.
	pending pendingRecords
	// revisions carries each deletion's revision from the watch to its record.
	revisions revision.Seen
	// backups keeps what each uninstall's Backup was made of, until it is verified.
	backups backupgate.Plans
}

// New makes the engine of a manager built from a config ClientConfig
// prepared: its clients, and an Event recorder that retries in place.
func New(mgr ctrl.Manager, finalizers decide.Finalizers, deleteWorkers int) (*Engine, error) {
	meta, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	recorder, err := newEventRecorder(mgr)
	if err != nil {
		return nil, err
	}
	return &Engine{
		Client:        Retry.Client(mgr.GetClient()),
		APIReader:     mgr.GetAPIReader(),
		Metadata:      meta,
		Discovery:     disc,
		Recorder:      recorder,
		Finalizers:    finalizers,
		DeleteWorkers: max(1, deleteWorkers),
		failures:      failureBackoff(),
	}, nil
}
