// Package undocontroller is csv-cleaner's controller of Undo objects
// (cleanup.csv-cleaner.io/v1alpha1): the undo of an uninstall as an API.
// It runs each Undo with pkg/undo, the code `csv-cleaner undo` runs on a
// laptop, one step per reconcile (the Restore made or followed, never
// waited on inside a reconcile), and writes where it stands into the
// object's status and Events; pkg/decide judges the phase.
//
// It must not decide what pkg/decide can decide, nor hold a finalizer:
// deleting an Undo undoes nothing and stops nothing Velero does.
package undocontroller
