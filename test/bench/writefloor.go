package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// WriteFloor is the least the first start's writes can take: a bare client
// sends csv-cleaner's first start's PATCHes (with a finalizer of its own),
// unpaced, 16 at a time. docs/firststart.md says how.
type WriteFloor struct {
	// Identity is who sends them: csv-cleaner's ServiceAccount, or a user in system:masters.
	Identity string
	Patches  int
	Took     time.Duration
	// CPU is kube-apiserver's and etcd's CPU during it.
	CPU CPU
	// ProbeP99 is the probe client's GET p99 meanwhile.
	ProbeP99 time.Duration
}

// APIServerMsPerPatch is kube-apiserver's CPU per PATCH, in milliseconds.
func (w WriteFloor) APIServerMsPerPatch() float64 {
	return w.CPU.APIServer * 1000 / float64(max(w.Patches, 1))
}

// floorWorkers is how many PATCHes the floor has in flight.
const floorWorkers = 16

// heldResources are the resources the first start patches, by the held
// map's key prefix (watchHeld).
var heldResources = map[string]schema.GroupVersionResource{
	csvGVR.Resource:       csvGVR,
	"clusterroles":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"clusterrolebindings": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
}

// measureWriteFloor patches, as cfg's identity, every object of h that
// csv-cleaner does not hold yet with finalizer, and times it.
func (e *Env) measureWriteFloor(ctx context.Context, cfg *rest.Config, identity, finalizer string, h *held, p *probe) (WriteFloor, error) {
	out := WriteFloor{Identity: identity}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // unpaced: no client-side rate limit
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return out, err
	}
	targets := h.unheld()
	out.Patches = len(targets)
	jobs := make(chan heldObject)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	meter, err := e.controlPlaneMeter()
	if err != nil {
		return out, err
	}
	_ = p.p99() // forget what came before
	start := time.Now()
	out.CPU, err = meter.during(func() error {
		for range floorWorkers {
			wg.Go(func() {
				for k := range jobs {
					if err := patchFinalizer(ctx, mc, k, finalizer); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			})
		}
		for _, k := range targets {
			jobs <- k
		}
		close(jobs)
		wg.Wait()
		if len(errs) > 0 {
			return fmt.Errorf("%d of the floor's %d patches failed, the first: %w", len(errs), len(targets), errs[0])
		}
		return nil
	})
	out.Took = time.Since(start)
	out.ProbeP99 = p.p99()
	return out, err
}

// patchFinalizer adds finalizer to the object as last seen, the merge
// patch guarded by its resourceVersion, as csv-cleaner patches from its
// cache: one request.
func patchFinalizer(ctx context.Context, mc metadata.Interface, k heldObject, finalizer string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": append(slices.Clone(k.finalizers), finalizer), "resourceVersion": k.resourceVersion}})
	if err != nil {
		return err
	}
	if _, err := mc.Resource(heldResources[k.resource]).Namespace(k.namespace).Patch(ctx, k.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patching %s %s: %w", k.resource, k.name, err)
	}
	return nil
}
