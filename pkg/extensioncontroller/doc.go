// Package extensioncontroller is csv-cleaner's controller of OLM v1
// ClusterExtensions (olm.operatorframework.io/v1). OLM v1 never sequences
// an uninstall: deleting an extension leaves its CRDs, and with them every
// custom resource, to the garbage collector at the same time as the
// operator that should finalize them. This controller holds every extension
// a CleanupPolicy selects with csv-cleaner's finalizer; once one is deleted
// it deletes the instances of its CRDs first, through the operator, then
// detaches the CRDs it keeps, and releases the extension last. It holds the
// extension that installed csv-cleaner whatever the policies say.
//
// It must not import the other controllers, nor reach into the engine's
// record, nor decide what pkg/decide can decide.
package extensioncontroller
