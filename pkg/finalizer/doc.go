// Package finalizer changes the finalizers of one object the way csv-cleaner
// must: a merge patch of metadata.finalizers guarded by the object's
// resourceVersion, retried on conflict from a live read, so that another
// controller's finalizer is never dropped or reordered. It knows nothing of
// OLM; pkg/rbac (the RBAC hold) and pkg/cleanup (releasing everything
// csv-cleaner placed) use it. Written remembers what this process patched,
// so that a patch is never made from a cached copy older than its own last
// patch (PatchCached), which would only earn a 409 Conflict.
package finalizer
