package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// deletions sees, through watches opened before the deletes start, when
// the first instance of some CRDs is deleted: an event, not a poll, so that
// the harness adds no load to what it measures.
type deletions struct {
	first atomic.Int64 // unix nanoseconds of the first deletion, 0 before
	stop  context.CancelFunc
}

func (e *Env) watchDeletions(ctx context.Context, set []fixtures.CRD) (*deletions, error) {
	ctx, cancel := context.WithCancel(ctx)
	d := &deletions{stop: cancel}
	for _, c := range set {
		gvr := schema.GroupVersionResource{Group: c.Group, Version: "v1", Resource: c.Plural}
		w, err := e.Dynamic.Resource(gvr).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("watching %s: %w", c.Name(), err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Deleted {
					d.first.CompareAndSwap(0, time.Now().UnixNano())
					return
				}
			}
		}()
	}
	return d, nil
}

// firstAt is when the first deletion was seen.
func (d *deletions) firstAt() (time.Time, bool) {
	ns := d.first.Load()
	return time.Unix(0, ns), ns != 0
}

// watchGone returns a channel closed when the CSV ns/name is gone: a watch
// sees it at once, and a GET every second covers a watch the server closed.
func (e *Env) watchGone(ctx context.Context, ns, name string) (<-chan struct{}, error) {
	gvr := schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	w, err := e.Dynamic.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, fmt.Errorf("watching CSV %s/%s: %w", ns, name, err)
	}
	gone := make(chan struct{})
	go func() {
		defer w.Stop()
		defer close(gone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		events := w.ResultChan()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					events = nil // closed by the server: the GETs go on
					continue
				}
				if ev.Type == watch.Deleted {
					return
				}
			case <-tick.C:
				if _, err := e.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return gone, nil
}
