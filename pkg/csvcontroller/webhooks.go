package csvcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// DeleteRefusingWebhooks deletes, while the operator is unavailable, the
// webhook configurations that carry the CSV's three owner labels and hold
// a webhook of sources, which refused csv-cleaner's requests: the
// uninstall would delete them at its end anyway (webhooks: Delete), and
// nobody serves them any more. A webhook configuration without those
// labels is never touched. It returns how many it deleted.
func (o *owner) DeleteRefusingWebhooks(ctx context.Context, sources []string) (int, error) {
	r := o.r
	configs, err := rbac.OwnedWebhookConfigs(ctx, r.APIReader, objects.Key(o.csv), sources)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, c := range configs {
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(schema.GroupVersionKind(c.GVK))
		target.SetName(c.Name)
		uid := c.UID
		err := r.Client.Delete(ctx, target, client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			deleted++
			r.Event(o.csv, corev1.EventTypeWarning, "OperatorWebhookDeleted", "Delete",
				"Deleted %s %s of this CSV now rather than at the end: its webhook %q refused csv-cleaner's deletes and the operator is unavailable",
				c.GVK.Kind, c.Name, c.Webhook)
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			return deleted, fmt.Errorf("deleting %s %s: %w", c.GVK.Kind, c.Name, err)
		}
	}
	return deleted, nil
}
