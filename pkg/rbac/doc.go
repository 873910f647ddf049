// Package rbac knows the cluster-scoped objects OLM makes for a CSV and
// marks with its owner labels (ClusterRoles, ClusterRoleBindings, webhook
// configurations): it selects exactly those and deletes them, holds a
// CSV's ClusterRoles and bindings with a finalizer until its operands are
// gone, keeps csv-cleaner's own bindings and releases its own RBAC last,
// and knows the identity csv-cleaner runs as and asks about its rights.
//
// It must not decide an uninstall's fate (pkg/decide does), nor write
// anything of an RBAC object but its finalizers and its deletion.
package rbac
