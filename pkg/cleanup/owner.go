package cleanup

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// Hooks are what the engine asks of the controller of what it uninstalls
// (a CSV or a ClusterExtension): its controller implements them. What is
// uninstalled is named by a decide.Owner. Which CRDs and targets
// an uninstall deals with, its controller hands to each pass
// (Uninstall.DeleteInstances); what is released last, Release says.
type Hooks interface {
	// Object is the owner being deleted (its metadata will do): its UID
	// keys the record, and the Events regard it.
	Object() client.Object
	// Record is the kind of its record.
	Record() RecordKind
	// OperatorUnavailable says why its operator is unavailable, nil while it runs.
	OperatorUnavailable(ctx context.Context) (*decide.Problem, error)
	// DeleteRefusingWebhooks deletes, while its operator is unavailable, its
	// own webhook configurations that hold a webhook of sources, which
	// refused csv-cleaner's deletes, and returns how many it deleted.
	DeleteRefusingWebhooks(ctx context.Context, sources []string) (int, error)
	// Release removes csv-cleaner's finalizer from it: an uninstall's last step.
	Release(ctx context.Context) error
	// Plan is what its uninstall deletes and keeps as the cluster is now
	// (what `csv-cleaner plan` prints, at PlanAll), read by the engine when
	// the backup gate asks for it (backupgate.Outcome.NeedsPlan): the gate
	// makes its Backup of a PlanKinds plan's kinds, then verifies the
	// Backup against a PlanAll plan's deletions.
	Plan(ctx context.Context, now time.Time, depth dryrun.PlanDepth) (*dryrun.DryRun, error)
}

// RecordKind is a kind of owner and of its uninstall record: a CSV has a
// CSVCleanup of its namespace and name, a ClusterExtension an
// ExtensionCleanup of its name. It brings everything that differs between
// the two, so that the engine branches on neither.
type RecordKind struct {
	// Kind names the owner's kind (decide.KindCSV, decide.KindExtension),
	// as the uninstall metrics label it.
	Kind string
	// Controller names the owner's controller, as
	// csv_cleaner_failed_attempts_total labels it.
	Controller string
	// Subject is the owner's kind.
	Subject schema.GroupVersionKind
	// empty is an empty record, to be read into.
	empty func() recordObject
	// create is the record of an owner, as it is created.
	create func(owner client.Object) recordObject
}

// The two kinds csv-cleaner uninstalls.
var (
	CSVs = RecordKind{Kind: decide.KindCSV, Controller: "clusterserviceversion", Subject: objects.CSVKind,
		empty: func() recordObject { return &cleanupv1alpha1.CSVCleanup{} },
		create: func(owner client.Object) recordObject {
			return &cleanupv1alpha1.CSVCleanup{
				ObjectMeta: metav1.ObjectMeta{Name: owner.GetName(), Namespace: owner.GetNamespace()},
				Spec:       cleanupv1alpha1.CSVCleanupSpec{CSVName: owner.GetName(), CSVNamespace: owner.GetNamespace()},
			}
		},
	}
	Extensions = RecordKind{Kind: decide.KindExtension, Controller: "clusterextension", Subject: objects.ExtensionKind,
		empty: func() recordObject { return &cleanupv1alpha1.ExtensionCleanup{} },
		create: func(owner client.Object) recordObject {
			return &cleanupv1alpha1.ExtensionCleanup{ObjectMeta: metav1.ObjectMeta{Name: owner.GetName()},
				Spec: cleanupv1alpha1.ExtensionCleanupSpec{ClusterExtensionName: owner.GetName()}}
		},
	}
)

// owner names an owner of the kind.
func (k RecordKind) owner(obj client.Object) decide.Owner {
	return decide.Owner{Kind: k.Subject.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// subject is an empty metadata-only owner of the kind.
func (k RecordKind) subject() *metav1.PartialObjectMetadata { return objects.Metadata(k.Subject) }
