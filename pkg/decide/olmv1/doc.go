// Package olmv1 holds the decisions only a ClusterExtension's uninstall
// takes (OLM v1, operator-controller), as pure functions of what was read:
// what its deletion is (its cascade, ClassifyExtension), how an object
// belongs to it (OwnershipOf, ControlledSets, Detach), the CRDs and target
// namespaces it deals with (ScopeExtensionCRDs, ExtensionTargets), its
// CRDs' fate (ExtensionCRDFate), the policy that selects it, and
// csv-cleaner's own extension (FindSelfExtension). What both owners share
// is pkg/decide's.
//
// Like pkg/decide, it must not import a client or read the cluster.
package olmv1
