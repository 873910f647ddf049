// Package krew checks what make dist wrote (DIST_DIR) with krew's own types
// (sigs.k8s.io/krew/pkg/index): the plugin manifest read strictly as krew
// reads it, held to krew's rules for an index, and each platform against
// its archive and checksums.txt. It is a module of its own: krew v0.4.3
// requires client-go v11.0.0+incompatible, which csv-cleaner's module must
// not select.
package krew
