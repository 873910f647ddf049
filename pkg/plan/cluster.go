package plan

import cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"

// ClusterObjectFate decides what happens to a cluster object that carries
// the CSV's three OLM owner labels: a ClusterRole or ClusterRoleBinding
// (clusterRBAC), or a webhook configuration (webhooks).
func ClusterObjectFate(s Settings, kind string, webhook bool) Item {
	action := s.ClusterRBAC
	if webhook {
		action = s.Webhooks
	}
	if action != cleanupv1alpha1.Delete {
		return Item{Action: ActionKeep, Kind: kind, Reason: cleanupv1alpha1.KeepPolicyOrphan}
	}
	return Item{Action: ActionDelete, Kind: kind, Reason: DeleteOwnerLabels}
}
