//go:build tools

// Package tools pins the Velero plugin this module builds.
package tools

import (
	_ "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws"
)
