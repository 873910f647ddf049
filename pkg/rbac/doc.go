// Package rbac knows the cluster-scoped objects OLM makes for a
// ClusterServiceVersion and marks with its three owner labels: ClusterRoles,
// ClusterRoleBindings and webhook configurations. It selects exactly those
// objects (never OperatorGroup roles or CRD aggregate roles, which OLM labels
// with another owner kind or not at all) and deletes them. It also holds a
// CSV's ClusterRoles and bindings with a finalizer (Holder), so that they
// stay in force after OLM deletes them, until the operator's operands are
// gone; in a cache, one CSV's objects are found by OwnerIndex, not by a
// scan of every cached object. For csv-cleaner's own CSV it keeps a second binding to each of its
// ClusterRoles (EnsureSelfBindings) and releases its own RBAC in the order
// that keeps its rights to the end (ReleaseSelf). Its rights on operands
// come from OLM's per-CRD admin roles, aggregated into OperandRole, which
// OperandBinder binds to csv-cleaner's own identity at start, recording its
// groups; those bindings are how a plan finds the identity csv-cleaner runs
// as (RunningIdentities, identity.go) and asks about its rights
// (AccessReview).
//
// It must not decide an uninstall's fate (pkg/decide does), nor write
// anything of an RBAC object but its finalizers and, with clusterRBAC:
// Delete, its deletion.
package rbac
