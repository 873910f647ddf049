package transient

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client wraps c so that each of its writes is retried in place while it
// fails transiently (Write, Delete). Its reads pass through: Transport
// retries them under every client of a rest.Config, caches included.
func (r Retrier) Client(c client.Client) client.Client { return &retryingClient{Client: c, r: r} }

type retryingClient struct {
	client.Client
	r Retrier
}

func (c *retryingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.r.Write(ctx, "create", func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c *retryingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.r.Delete(ctx, func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *retryingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.r.Write(ctx, "update", func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *retryingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.r.Write(ctx, "patch", func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c *retryingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return c.r.Write(ctx, "apply", func() error { return c.Client.Apply(ctx, obj, opts...) })
}

func (c *retryingClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *retryingClient) SubResource(name string) client.SubResourceClient {
	return &retryingSubResource{SubResourceClient: c.Client.SubResource(name), r: c.r}
}

type retryingSubResource struct {
	client.SubResourceClient
	r Retrier
}

func (c *retryingSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return c.r.Write(ctx, "create", func() error { return c.SubResourceClient.Create(ctx, obj, sub, opts...) })
}

func (c *retryingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return c.r.Write(ctx, "update", func() error { return c.SubResourceClient.Update(ctx, obj, opts...) })
}

func (c *retryingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return c.r.Write(ctx, "patch", func() error { return c.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}
