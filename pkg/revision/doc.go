// Package revision finds the revision at which an uninstall's deletion
// began and answers, at that revision, which operands created in the
// deletion's own second existed when it began: the watch's memory of it
// (Seen), the search after the fact by Exact LISTs (Search, docs/exact.md),
// and the lookups of one pass (Second).
//
// It only reads, and must not decide an operand's fate (pkg/decide does).
package revision
