// Command netnsforward runs a program in the network namespace it was
// started in (`unshare -n`, only a loopback interface) and makes TCP
// addresses of the namespace it came from reachable there: it listens on
// each -listen address and carries every connection over a Unix socket,
// which a path on the shared file system reaches across namespaces, to a
// forwarder outside (test/cluster's) that dials the same address there.
//
// The end-to-end harness runs Velero's server this way: it binds :8080
// with no flag to change it, where OLM's operators already listen.
//
//	netnsforward -listen 127.0.0.1:6443=/tmp/x/6443.sock -- velero server ...
package main
