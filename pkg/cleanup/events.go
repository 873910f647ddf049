package cleanup

import (
	"context"
	"fmt"
	"unicode/utf8"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// newEventRecorder is csv-cleaner's Event recorder: client-go's events
// broadcaster, as the manager's own, but with a sink that retries in place
// (Retry). The broadcaster drops an Event the API server answers with an
// error status ("will not retry"), so that under a degraded API server
// CleanupStarted and CleanupCompleted went missing.
func newEventRecorder(mgr ctrl.Manager) (events.EventRecorder, error) {
	cs, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("creating the events client: %w", err)
	}
	b := events.NewBroadcaster(retryingSink{&events.EventSinkImpl{Interface: cs}})
	// Recording starts now, so that no Event of a controller that starts
	// first is lost, and stops with the manager.
	log := mgr.GetLogger().WithName("events")
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), log))
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("starting to record Events: %w", err)
	}
	stopLogging, err := b.StartLogging(log.V(1))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting to log Events: %w", err)
	}
	err = mgr.Add(stopWith(func() {
		stopLogging()
		b.Shutdown()
		cancel()
	}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("adding the Event broadcaster: %w", err)
	}
	return b.NewRecorder(mgr.GetScheme(), "csv-cleaner"), nil
}

// stopWith runs stop when the manager stops, leader or not.
type stopWith func()

func (s stopWith) Start(ctx context.Context) error {
	<-ctx.Done()
	s()
	return nil
}

func (stopWith) NeedLeaderElection() bool { return false }

// retryingSink writes Events with Retry; an Event whose create's reply was
// lost is there already, and counts as written.
type retryingSink struct{ events.EventSink }

func (s retryingSink) Create(ctx context.Context, ev *eventsv1.Event) (out *eventsv1.Event, err error) {
	err = Retry.Write(ctx, "create", func() (err error) { out, err = s.EventSink.Create(ctx, ev); return err })
	if transient.WasLost(err) && apierrors.IsAlreadyExists(err) {
		return ev, nil
	}
	return out, err
}

func (s retryingSink) Update(ctx context.Context, ev *eventsv1.Event) (out *eventsv1.Event, err error) {
	err = Retry.Write(ctx, "update", func() (err error) { out, err = s.EventSink.Update(ctx, ev); return err })
	return out, err
}

func (s retryingSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (out *eventsv1.Event, err error) {
	err = Retry.Write(ctx, "patch", func() (err error) { out, err = s.EventSink.Patch(ctx, old, data); return err })
	return out, err
}

// maxNote is the longest note the API server takes in an Event
// (events.k8s.io/v1 validation: 1 KB).
const maxNote = 1024

// Event sends an Event regarding obj, its note cut to what the API server
// takes (the record's message carries the whole text).
func (e *Engine) Event(regarding client.Object, eventType, reason, action, note string, args ...any) {
	if e.Recorder != nil {
		e.Recorder.Eventf(regarding, nil, eventType, reason, action, "%s", cutNote(fmt.Sprintf(note, args...)))
	}
}

// cutNote cuts a note to maxNote bytes, on a character's boundary.
func cutNote(note string) string {
	if len(note) <= maxNote {
		return note
	}
	const more = "…"
	cut := maxNote - len(more)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + more
}
