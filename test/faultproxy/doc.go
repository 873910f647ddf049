// Package faultproxy is an HTTPS reverse proxy on 127.0.0.1 in front of a
// kube-apiserver that degrades it as a real cluster's bad minutes do: it
// refuses requests (500 "etcdserver: request timed out", 503, 429 with
// Retry-After), lets DELETEs and PATCHes happen and then loses their reply
// (a 500, or a reset stream), delays requests and cuts watches. It is
// seeded, counts what it injected by kind, and takes targeted rules for a
// spec that needs one request's reply lost. The envtest specs and the
// benchmark put csv-cleaner behind it.
package faultproxy
