// Package carry carries TCP and Unix socket connections across network
// namespaces for the end-to-end harness: a listener on one side, a dial on
// the other (see test/netnsforward).
package carry
