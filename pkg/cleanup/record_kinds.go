package cleanup

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// recordObject is a record of either kind: a CSVCleanup or an ExtensionCleanup.
type recordObject = client.Object

// newRecord opens obj (a CSVCleanup or an ExtensionCleanup), as read, for a reconcile.
func newRecord(obj recordObject) *record {
	var rec *record
	switch o := obj.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		rec = &record{obj: o, base: o.DeepCopy(), uid: o.Status.CSVUID, st: &o.Status.UninstallStatus}
	case *cleanupv1alpha1.ExtensionCleanup:
		rec = &record{obj: o, base: o.DeepCopy(), uid: o.Status.ExtensionUID, st: &o.Status.UninstallStatus}
	default:
		panic(fmt.Sprintf("no uninstall record: %T", obj))
	}
	rec.prev = *rec.st.DeepCopy()
	return rec
}

// statusOf is a record's whole status, as it is written.
func statusOf(obj client.Object) any {
	switch o := obj.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		return o.Status
	case *cleanupv1alpha1.ExtensionCleanup:
		return o.Status
	}
	panic(fmt.Sprintf("no uninstall record: %T", obj))
}

// copyMeta sets dst's metadata to src's (records of one kind).
func copyMeta(dst, src client.Object) {
	switch d := dst.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		d.ObjectMeta = src.(*cleanupv1alpha1.CSVCleanup).ObjectMeta
	case *cleanupv1alpha1.ExtensionCleanup:
		d.ObjectMeta = src.(*cleanupv1alpha1.ExtensionCleanup).ObjectMeta
	}
}

// setStatus replaces a record's uninstall status (its subject's UID stays).
func setStatus(obj client.Object, st cleanupv1alpha1.UninstallStatus) *cleanupv1alpha1.UninstallStatus {
	switch o := obj.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		o.Status.UninstallStatus = st
		return &o.Status.UninstallStatus
	case *cleanupv1alpha1.ExtensionCleanup:
		o.Status.UninstallStatus = st
		return &o.Status.UninstallStatus
	}
	panic(fmt.Sprintf("no uninstall record: %T", obj))
}

// afresh is a copy of obj whose status is started afresh for the owner of uid.
func afresh(obj recordObject, uid types.UID) recordObject {
	switch o := obj.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		fresh := o.DeepCopy()
		fresh.Status = cleanupv1alpha1.CSVCleanupStatus{CSVUID: uid}
		return fresh
	case *cleanupv1alpha1.ExtensionCleanup:
		fresh := o.DeepCopy()
		fresh.Status = cleanupv1alpha1.ExtensionCleanupStatus{ExtensionUID: uid}
		return fresh
	}
	panic("no uninstall record")
}

// Releasing lets through the records (of either kind) that say Releasing:
// each controller watches its records with it, so that one left Releasing
// by a csv-cleaner that stopped after the release is completed by the next.
var Releasing = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	switch o := obj.(type) {
	case *cleanupv1alpha1.CSVCleanup:
		return o.Status.Phase == cleanupv1alpha1.PhaseReleasing
	case *cleanupv1alpha1.ExtensionCleanup:
		return o.Status.Phase == cleanupv1alpha1.PhaseReleasing
	}
	return false
})
