package objects

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListPages lists with reader a page of size at a time, handing each page to
// fn before it reads the next, so that a large listing is never held whole.
func ListPages[L client.ObjectList](ctx context.Context, reader client.Reader, newList func() L, size int64, fn func(L) error, opts ...client.ListOption) error {
	for next := ""; ; {
		list := newList()
		if err := reader.List(ctx, list, slices.Concat(opts, []client.ListOption{client.Limit(size), client.Continue(next)})...); err != nil {
			return err
		}
		if err := fn(list); err != nil {
			return err
		}
		if next = list.GetContinue(); next == "" {
			return nil
		}
	}
}
