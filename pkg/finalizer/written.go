package finalizer

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Written remembers, for WrittenTTL, the resourceVersion each object had
// once this process patched it: a cached copy with another resourceVersion
// is one the cache has not brought up to date with that patch yet (the
// controller's "expectations"). A nil Written remembers nothing.
type Written struct {
	mu sync.Mutex
	m  map[types.UID]written
}

type written struct {
	resourceVersion string
	at              time.Time
}

// WrittenTTL bounds how long a patch is remembered: a cache is normally
// milliseconds behind, and a copy changed by someone else since is read
// live for no longer than this.
const WrittenTTL = 30 * time.Second

// Note remembers the object's resourceVersion after a patch.
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
	w.m[obj.GetUID()] = written{resourceVersion: obj.GetResourceVersion(), at: now}
}

// Behind reports whether a cached copy predates this process's last patch
// of the object; once the cache shows that patch, it is forgotten.
func (w *Written) Behind(obj metav1.Object) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[obj.GetUID()]
	if !ok {
		return false
	}
	if obj.GetResourceVersion() == e.resourceVersion || time.Since(e.at) > WrittenTTL {
		delete(w.m, obj.GetUID())
		return false
	}
	return true
}
