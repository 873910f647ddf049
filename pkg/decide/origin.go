package decide

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Origin is one object an uninstall destroyed as it was when its Backup was
// verified: its UID then, and its ownerReferences, which a restore strips
// and an undo writes again (Relink).
type Origin struct {
	Object Held      `json:"object"`
	UID    types.UID `json:"uid"`
	// Owners are its metadata.ownerReferences, as they were.
	Owners []metav1.OwnerReference `json:"owners,omitempty"`
	// Labels are a custom resource's labels, as they were: what an undo's
	// --selector picks its operands by.
	Labels map[string]string `json:"labels,omitempty"`
}

// OriginOf is n as an Origin.
func OriginOf(n Node) Origin {
	o := Origin{Object: n.Held, UID: n.UID}
	for _, r := range n.Owners {
		o.Owners = append(o.Owners, r.Reference())
	}
	return o
}

// Reference is the ownerReference r was read from.
func (r OwnerRef) Reference() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID, Controller: r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion}
}
