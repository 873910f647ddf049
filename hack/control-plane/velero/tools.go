//go:build tools

// Package tools pins the Velero command this module builds.
package tools

import (
	_ "github.com/vmware-tanzu/velero/cmd/velero"
)
