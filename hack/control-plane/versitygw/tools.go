//go:build tools

// Package tools pins the S3 gateway this module builds.
package tools

import (
	_ "github.com/versity/versitygw/cmd/versitygw"
)
