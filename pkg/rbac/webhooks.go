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
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := reader.List(ctx, validating, owned); err != nil {
		return nil, fmt.Errorf("listing the ValidatingWebhookConfigurations of %s: %w", csv, err)
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := reader.List(ctx, mutating, owned); err != nil {
		return nil, fmt.Errorf("listing the MutatingWebhookConfigurations of %s: %w", csv, err)
	}
	type config struct {
		gvk   metav1.GroupVersionKind
		meta  metav1.ObjectMeta
		hooks []string
	}
	var configs []config
	for _, c := range validating.Items {
		cfg := config{gvk: metav1.GroupVersionKind(ValidatingWebhookConfiguration), meta: c.ObjectMeta}
		for _, w := range c.Webhooks {
			cfg.hooks = append(cfg.hooks, w.Name)
		}
		configs = append(configs, cfg)
	}
	for _, c := range mutating.Items {
		cfg := config{gvk: metav1.GroupVersionKind(MutatingWebhookConfiguration), meta: c.ObjectMeta}
		for _, w := range c.Webhooks {
			cfg.hooks = append(cfg.hooks, w.Name)
		}
		configs = append(configs, cfg)
	}
	var out []WebhookConfig
	for _, c := range configs {
		if !IsOwnedBy(c.meta.Labels, csv) || c.meta.DeletionTimestamp != nil {
			continue
		}
		if i := slices.IndexFunc(c.hooks, func(n string) bool { return slices.Contains(webhooks, n) }); i >= 0 {
			out = append(out, WebhookConfig{GVK: c.gvk, Name: c.meta.Name, UID: c.meta.UID, Webhook: c.hooks[i]})
		}
	}
	return out, nil
}
