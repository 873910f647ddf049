package rbac

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WebhookConfig is a webhook configuration found by the name of one of its webhooks.
type WebhookConfig struct {
	GVK  metav1.GroupVersionKind
	Name string
	UID  types.UID
	// Webhook is the webhook of the configuration that was asked for.
	Webhook string
}

// OwnedWebhookConfigs finds, among the webhook configurations that carry
// the CSV's three owner labels, those that hold a webhook of one of the
// given names (as the API server names a webhook in its refusals).
func OwnedWebhookConfigs(ctx context.Context, reader client.Reader, csv types.NamespacedName, webhooks []string) ([]WebhookConfig, error) {
	owned := client.MatchingLabelsSelector{Selector: OwnerSelector(csv)}
	var out []WebhookConfig
	add := func(gvk metav1.GroupVersionKind, meta metav1.ObjectMeta, names []string) {
		if !IsOwnedBy(meta.Labels, csv) || meta.DeletionTimestamp != nil {
			return
		}
		for _, n := range names {
			if slices.Contains(webhooks, n) {
				out = append(out, WebhookConfig{GVK: gvk, Name: meta.Name, UID: meta.UID, Webhook: n})
				return
			}
		}
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := reader.List(ctx, validating, owned); err != nil {
		return nil, fmt.Errorf("listing the ValidatingWebhookConfigurations of %s: %w", csv, err)
	}
	for _, c := range validating.Items {
		var names []string
		for _, w := range c.Webhooks {
			names = append(names, w.Name)
		}
		add(metav1.GroupVersionKind(ValidatingWebhookConfiguration), c.ObjectMeta, names)
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := reader.List(ctx, mutating, owned); err != nil {
		return nil, fmt.Errorf("listing the MutatingWebhookConfigurations of %s: %w", csv, err)
	}
	for _, c := range mutating.Items {
		var names []string
		for _, w := range c.Webhooks {
			names = append(names, w.Name)
		}
		add(metav1.GroupVersionKind(MutatingWebhookConfiguration), c.ObjectMeta, names)
	}
	return out, nil
}
