package decide

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

// ClusterObjectItem is the item of one such object, called name: with
// Delete, one already being deleted (OLM's own finalizer deletes the CSV's
// cluster RBAC the moment the CSV is deleted; the RBAC hold keeps it in
// force) is AlreadyTerminating, not the uninstall's deletion: the uninstall
// only waits for it, and a backup neither needs nor gets it (Velero skips
// objects being deleted).
func ClusterObjectItem(s Settings, kind string, webhook bool, name string, deleting bool) Item {
	it := ClusterObjectFate(s, kind, webhook)
	it.Name = name
	if deleting && it.Action == ActionDelete {
		it.Reason, it.Message = DeleteTerminating, "already being deleted (OLM deletes the CSV's cluster RBAC with it); the uninstall waits for it to go"
	}
	return it
}
