// Package transient retries, in place, the requests the API server fails
// for a moment: a 5xx, a timeout, a 429 beyond client-go's own waits, a
// reset or closed connection. One failed request then no longer fails a
// whole reconcile (some thirty requests for an uninstall), and a request
// whose reply was lost is recognised when it is retried: a DELETE that
// finds its object gone succeeded; a write that then conflicts or finds
// its object there is reported as a LostReply, for the caller to read the
// object and see whether its own write is what it finds.
//
// Every request csv-cleaner sends is idempotent when retried: reads,
// deletes with a UID precondition, patches guarded by a resourceVersion,
// creates of named objects (a retry meets AlreadyExists) and reviews.
// The schedule is client-go's retry.OnError with a jittered backoff;
// which errors are transient is apimachinery's error predicates.
//
// It must not retry what is not idempotent, nor decide what is written or
// whether a failure blocks an uninstall (the callers do).
package transient
