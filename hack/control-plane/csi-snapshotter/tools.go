//go:build tools

// Package tools pins the snapshot-controller and csi-snapshotter commands this module builds.
package tools

import (
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter"
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller"
)
