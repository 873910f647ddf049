package objects

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PageSize is how many objects every paged LIST of csv-cleaner reads at a
// time: a large listing is never held in memory as one response.
const PageSize = 500

// ListPages lists with reader a page of PageSize at a time (a client.Limit
// among opts sets another size), handing each page to fn before it reads
// the next, so that a large listing is never held whole.
func ListPages[L client.ObjectList](ctx context.Context, reader client.Reader, newList func() L, fn func(L) error, opts ...client.ListOption) error {
	for next := ""; ; {
		list := newList()
		if err := reader.List(ctx, list, slices.Concat([]client.ListOption{client.Limit(PageSize)}, opts, []client.ListOption{client.Continue(next)})...); err != nil {
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
