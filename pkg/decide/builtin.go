package decide

import "strings"

// BuiltInGroup reports whether a group is Kubernetes' own, served without a CRD.
func BuiltInGroup(group string) bool {
	return group == "" || group == "apps" || group == "batch" || group == "policy" || group == "autoscaling" || strings.HasSuffix(group, ".k8s.io")
}
