// Command sampleoperator is the end-to-end tests' sample operator: a small
// real controller that puts a finalizer on every instance of its kind and
// removes it once the instance is deleted, as operators that clean up
// external state do. The tests run it as its own process, authenticated as
// the ServiceAccount OLM created for it (--as-service-account), so that the
// API server checks exactly the permissions OLM granted it.
package main
