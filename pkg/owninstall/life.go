package owninstall

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Install is how csv-cleaner was installed and what it places: what its
// own uninstall looks for and releases.
type Install struct {
	// Self is csv-cleaner's own CSV (OPERATOR_CONDITION_NAME in the pod's
	// namespace); empty when OLM v0 did not install it.
	Self types.NamespacedName
	// Namespace is csv-cleaner's own namespace (POD_NAMESPACE): when it is
	// terminating, csv-cleaner is being uninstalled. "" when not known.
	Namespace string
	// Finalizers are the finalizer (and legacy names) it places on CSVs and ClusterExtensions.
	Finalizers decide.Finalizers
	// Hold is the finalizer it places on cluster RBAC (rbac.HoldName).
	Hold string
	// Workers is how many patches a release has in flight at once.
	Workers int
}

// namespace is csv-cleaner's own namespace, "" when not known.
func (in Install) namespace() string {
	if in.Namespace != "" {
		return in.Namespace
	}
	return in.Self.Namespace
}

// Life is csv-cleaner's own install as both controllers see it: what is
// happening to it (Fate), whether an object is its own, and its release.
type Life struct {
	Install
	// Cached reads csv-cleaner's namespace and own objects from the manager's cache.
	Cached client.Reader
	// Live reads what a decision about its uninstall needs, and what a release finds.
	Live client.Reader
	// Writer patches what a release releases and writes its Events.
	Writer client.Writer

	// seen remembers a replacement or an uninstall of its own CSV once
	// seen (Fate), with why.
	mu   sync.Mutex
	seen decide.SelfFate
	why  string
	// ext is the ClusterExtension that installed csv-cleaner, when OLM v1
	// did (WatchOwnExtension); nil otherwise.
	ext *ownExtension
}

// IsOwnCSV reports whether the CSV is csv-cleaner's own.
func (l *Life) IsOwnCSV(csv metav1.Object) bool {
	return l.Self.Name != "" && objects.Key(csv) == l.Self
}

// ReleaseOthers is the body of csv-cleaner's own uninstall, while its own
// CSV or ClusterExtension is held (so its Deployment and RBAC are still in
// force): it removes every finalizer it placed on CSVs, other
// ClusterExtensions and cluster RBAC. settled is true once a pass found
// none left to remove: only then may the caller release its own object, as
// a reconcile that started before the deletion may still add one.
func (l *Life) ReleaseOthers(ctx context.Context, why string) (settled bool, _ error) {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Removing every finalizer csv-cleaner placed: csv-cleaner is being uninstalled", "why", why)
	released, err := l.Releaser().ReleaseOthers(ctx)
	if len(released) > 0 {
		log.Info("Removed csv-cleaner's finalizers", "objects", len(released))
	}
	return err == nil && len(released) == 0, err
}

// ReleaseAgainAfter spaces the passes of ReleaseOthers until one settles.
const ReleaseAgainAfter = time.Second

// ReleaseOwnRBAC releases the hold on csv-cleaner's own ClusterRoles and
// bindings, in the order that keeps its rights until the last one. A
// refusal means they are gone already: nothing is left to do.
func (l *Life) ReleaseOwnRBAC(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Releasing csv-cleaner's own cluster RBAC, last")
	_, err := rbac.Holder{Lister: l.Live, Live: l.Live, Writer: l.Writer, Finalizer: l.Hold}.ReleaseSelf(ctx, l.Self)
	if apierrors.IsForbidden(err) {
		log.Info("csv-cleaner's own rights are gone: OLM removes what is left of this version")
		return nil
	}
	return rbac.HoldError(err)
}

// Releaser removes what this csv-cleaner placed (see Releaser).
func (l *Life) Releaser() Releaser {
	return Releaser{Live: l.Live, Writer: l.Writer, Finalizers: l.Finalizers, Hold: l.Hold,
		Self: l.Self, SelfExtension: l.ext.name(), Workers: max(1, l.Workers), Reporter: reporter()}
}
