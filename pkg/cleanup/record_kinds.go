package cleanup

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// recordObject is a record of either kind: a CSVCleanup or an ExtensionCleanup.
type recordObject = cleanupv1alpha1.UninstallRecord

// newRecord opens obj, as read, for a reconcile.
func newRecord(obj recordObject) *record {
	rec := &record{obj: obj, base: obj.DeepCopyObject().(recordObject), uid: obj.SubjectUID(), st: obj.Uninstall()}
	rec.prev = *rec.st.DeepCopy()
	return rec
}

// copyMeta sets dst's metadata to src's: both embed an ObjectMeta, which
// GetObjectMeta returns.
func copyMeta(dst, src recordObject) {
	*dst.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta) = *src.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}

// setStatus replaces a record's uninstall status (its subject's UID stays).
func setStatus(obj recordObject, st cleanupv1alpha1.UninstallStatus) *cleanupv1alpha1.UninstallStatus {
	*obj.Uninstall() = st
	return obj.Uninstall()
}

// afresh is a copy of obj whose status is started afresh for the owner of uid.
func afresh(obj recordObject, uid types.UID) recordObject {
	fresh := obj.DeepCopyObject().(recordObject)
	fresh.Restart(uid)
	return fresh
}

// Releasing lets through the records (of either kind) that say Releasing:
// each controller watches its records with it, so that one left Releasing
// by a csv-cleaner that stopped after the release is completed by the next.
var Releasing = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	rec, ok := obj.(recordObject)
	return ok && rec.Uninstall().Phase == cleanupv1alpha1.PhaseReleasing
})
