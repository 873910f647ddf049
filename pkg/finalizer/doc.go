// Package finalizer changes the finalizers of one object the way csv-cleaner
// must: a merge patch of metadata.finalizers guarded by the object's
// resourceVersion, retried on conflict from a live read, never from a cached
// copy older than its own last patch (Written). It knows nothing of OLM.
//
// It must not write anything but metadata.finalizers, nor drop or reorder
// another controller's finalizer.
package finalizer
