package finalizer

import (
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Written remembers, for WrittenTTL, the resourceVersion and finalizers
// each object had once this process patched it: a cached copy with an older
// resourceVersion is one the cache has not brought up to date with that
// patch yet (the controller's "expectations"), and the object as this
// process left it is the newest it knows. A nil Written remembers nothing.
type Written struct {
	mu sync.Mutex
	m  map[types.UID]written
}

type written struct {
	resourceVersion string
	finalizers      []string
	at              time.Time
}

// WrittenTTL bounds how long a patch is remembered: a cache is normally
// milliseconds behind, and a copy changed by someone else since is read
// live for no longer than this.
const WrittenTTL = 30 * time.Second

// Note remembers the object's resourceVersion and finalizers after a patch.
func (w *Written) Note(obj metav1.Object) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.UID]written{}
	}
	now := time.Now()
	for uid, e := range w.m { // forget what has expired, so that the map stays small
		if now.Sub(e.at) > WrittenTTL {
			delete(w.m, uid)
		}
	}
	w.m[obj.GetUID()] = written{resourceVersion: obj.GetResourceVersion(), finalizers: slices.Clone(obj.GetFinalizers()), at: now}
}

// Behind reports whether a cached copy predates this process's last patch
// of the object; once the cache shows that patch, or a later version, it
// is forgotten.
func (w *Written) Behind(obj metav1.Object) bool {
	_, _, behind := w.Last(obj)
	return behind
}

// Last returns, for a cached copy older than this process's last patch of
// obj, the resourceVersion and finalizers that patch left, to patch from
// instead (a change by someone else since is then a conflict). behind is
// false once the cache has caught up; a resourceVersion "" means: read live.
func (w *Written) Last(obj metav1.Object) (resourceVersion string, finalizers []string, behind bool) {
	if w == nil {
		return "", nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[obj.GetUID()]
	if !ok {
		return "", nil, false
	}
	if obj.GetResourceVersion() == e.resourceVersion || time.Since(e.at) > WrittenTTL {
		delete(w.m, obj.GetUID())
		return "", nil, false
	}
	cached, err1 := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	last, err2 := strconv.ParseUint(e.resourceVersion, 10, 64)
	switch {
	case err1 != nil || err2 != nil:
		return "", nil, true
	case cached > last:
		delete(w.m, obj.GetUID()) // the cache is past this process's patch
		return "", nil, false
	}
	return e.resourceVersion, slices.Clone(e.finalizers), true
}
