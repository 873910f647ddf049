// Package pace keeps csv-cleaner's background writes from crowding out
// the API server's other clients. A first start on a large cluster puts a
// finalizer on every managed CSV and the RBAC hold on its ClusterRoles and
// bindings: tens of thousands of PATCHes, each of which costs
// kube-apiserver more the more ClusterRoleBindings the cluster holds (its
// RBAC authorizer visits them all for a ServiceAccount's request). Sent as
// fast as the server takes them, they queue every other client behind them.
//
// A Limiter bounds the requests in flight by the latency the API server
// answers them with, a gradient limit as TCP Vegas and Netflix's
// concurrency-limits keep one: while a window's median latency stays within
// Tolerance times the lowest median of recent windows (the latency of an
// unloaded server), the limit grows by one; beyond, it shrinks in proportion;
// a 429, a 5xx or a failed connection halves it. Every few windows one runs
// at a limit of 1 to measure that unloaded latency afresh (decide.go, pure). Transport
// applies the limiter a request's context carries (With); requests without
// one pass untouched.
//
// It owns the pacing and nothing else: it never retries (pkg/transient
// does), never decides what is written, and paces only what a caller marks.
// The uninstall's deletes are not paced: they have slots of their own.
package pace
