// Package extension is csv-cleaner's controller of OLM v1 ClusterExtensions
// (olm.operatorframework.io/v1).
//
// OLM v1 never sequences an uninstall: deleting a ClusterExtension leaves
// everything it applied (the CRDs, the operator's Deployment, its RBAC and
// webhooks) to the garbage collector, so the CRDs go, and with them every
// custom resource of their kinds, at the same time as the operator that
// should have finalized them. This controller puts csv-cleaner's finalizer
// on every ClusterExtension a CleanupPolicy selects
// (clusterExtensionSelector). While it holds a deleted extension, the
// garbage collector (background propagation) deletes nothing of it and the
// operator goes on running: the uninstall deletes the instances of the
// extension's CRDs first, through the operator, then detaches the CRDs it
// keeps (crds: Orphan, or instances left) from the extension, so that the
// garbage collector leaves them, and releases its finalizer last.
//
// Installed by OLM v1 itself, csv-cleaner holds the extension that
// installed it whatever the policies say (reconcileSelf); that extension's
// deletion is csv-cleaner's uninstall, which releases every finalizer it
// placed and its own extension's last (pkg/self finds the extension and
// decides; decide.FindSelfExtension picks it).
//
// Every decision is pkg/decide's (the extension_*.go decisions); the
// uninstall runs on the engine (pkg/cleanup), as a CSV's does: the record
// (ExtensionCleanup), the deletion of a CRD's instances, the Events and the
// metrics. Files: reconciler.go (the skeleton, the finalizer), delete.go
// (one pass of the uninstall, a straight line), owner.go (the extension as
// the engine knows it), gather.go (what the decisions read), crds.go (the
// CRDs' fate: detach, or leave to the garbage collector), plan.go (the dry
// run), setup.go (the watches).
//
// It must not import the CSV controller (pkg/csv), nor reach into the
// engine's record, nor decide what pkg/decide can decide.
package extension
