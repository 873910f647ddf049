//go:build tools

// Package tools pins the kubectl-operator command this module builds.
package tools

import _ "github.com/operator-framework/kubectl-operator"
