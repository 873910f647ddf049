package revision

import (
	"context"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Recorded returns the deletion revision that subject's uninstall record
// holds (a CSVCleanup for a CSV, an ExtensionCleanup for anything else,
// each of the subject's UID) and how it was found, "" when there is none:
// what a plan reads to decide the operands of the deletion's second as the
// run does.
func (r Reader) Recorded(ctx context.Context, subject client.Object) (revision, from string, _ error) {
	_, isCSV := subject.(*operatorsv1alpha1.ClusterServiceVersion)
	rec := cleanupv1alpha1.NewRecord(!isCSV)
	if err := r.Live.Get(ctx, client.ObjectKeyFromObject(subject), rec); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("reading the uninstall record of %s: %w", klog.KObj(subject), err)
	}
	if rec.SubjectUID() != subject.GetUID() {
		return "", "", nil
	}
	return rec.Uninstall().DeletionRevision, rec.Uninstall().DeletionRevisionFrom, nil
}
