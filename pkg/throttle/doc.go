// Package throttle keeps csv-cleaner's background writes (the finalizers
// and RBAC holds of a first start, tens of thousands of PATCHes on a large
// cluster) from crowding out the API server's other clients: a Limiter
// bounds the requests in flight by the latency the API server answers with,
// a gradient limit as TCP Vegas keeps one, and Transport applies the
// limiter a request's context carries.
//
// It must not retry (pkg/transient does) nor decide what is written, and
// paces only what a caller marks; an uninstall's deletes have slots of
// their own.
package throttle
