// Package self is csv-cleaner's own life cycle.
//
// Life says what is happening to csv-cleaner's own install (fate.go,
// decide.DecideSelf: installed, replaced by another version, or
// uninstalled), whether OLM v0 installed it (its own CSV) or OLM v1 (the
// ClusterExtension that installed it, extension.go). Its uninstall
// removes every finalizer it placed (Releaser, release.go), in the
// controllers' reconciles, on SIGTERM (ReleaseOnExit, exit.go) and in
// `csv-cleaner release`. At start it binds itself to its operand role
// (OperandBinding, bind.go).
//
// It must not import the engine (pkg/cleanup) or a controller: both
// controllers import it, and each handles its own object with it.
package self
