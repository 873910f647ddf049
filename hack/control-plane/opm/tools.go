//go:build tools

// Package tools pins the operator-registry command this module builds.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
