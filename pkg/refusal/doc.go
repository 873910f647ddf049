// Package refusal tells the API server's refusals (an admission webhook or
// policy, a failing conversion, RBAC) from passing failures, says what an
// admin can do about each, and asks before anything is deleted whether
// csv-cleaner may list, delete and patch the operands (AccessOf).
//
// It must not retry (pkg/transient does) nor decide an uninstall's fate.
package refusal
