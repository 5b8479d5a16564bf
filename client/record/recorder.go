package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// BufferSize is how many events Eventf queues for the sender before it
// drops.
const BufferSize = 1000

// Write retries: attempts per event and the first back-off (doubled each
// time).
const (
	writeAttempts = 3
	retryBase     = 200 * time.Millisecond
)

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("record: Run called more than once")

// writer is what the Recorder needs of the API; *client.Client satisfies it.
type writer interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error
}

var _ writer = (*client.Client)(nil)

// Recorder writes core/v1 Events about objects on behalf of one component.
// Create it with NewRecorder, start Run once, and call Eventf from any
// goroutine. A nil *Recorder records nothing.
type Recorder struct {
	w         writer
	events    *api.ResourceInfo
	component string
	log       *slog.Logger
	// kinds maps Go types to apiVersion/kind for objects whose TypeMeta
	// is empty. Effectively const.
	kinds map[reflect.Type]api.TypeMeta
	now   func() time.Time

	incoming chan occurrence
	running  atomic.Bool
	dropped  atomic.Uint64
	limited  atomic.Uint64
	written  atomic.Uint64
	handled  atomic.Uint64 // occurrences taken off the queue and processed
}

// NewRecorder returns a Recorder writing through c as component (the
// Events' source.component and reportingComponent); log may be nil.
func NewRecorder(c *client.Client, component string, log *slog.Logger) *Recorder {
	return newRecorder(c, component, log)
}

func newRecorder(w writer, component string, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{
		w:         w,
		component: component,
		log:       log.With("component", "record", "source", component),
		kinds:     map[reflect.Type]api.TypeMeta{},
		now:       time.Now,
		incoming:  make(chan occurrence, BufferSize),
	}
	for _, info := range api.Resources() {
		r.kinds[reflect.TypeOf(info.New())] = api.TypeMeta{APIVersion: info.GroupVersion(), Kind: info.Kind}
		if info.Group == "" && info.Resource == "events" {
			r.events = info
		}
	}
	return r
}

// Eventf records an event of eventType (api.EventTypeNormal or
// api.EventTypeWarning) about obj with a reason and a message. It never
// blocks: when the buffer is full the event is dropped and counted
// (Dropped). An event of another type, or about a nil object, is logged
// and dropped.
func (r *Recorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	if r == nil {
		return
	}
	if v := reflect.ValueOf(obj); obj == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		r.log.Warn("event about a nil object dropped", "reason", reason)
		return
	}
	if eventType != api.EventTypeNormal && eventType != api.EventTypeWarning {
		r.log.Warn("event with an unsupported type dropped", "type", eventType, "reason", reason)
		return
	}
	now := r.now()
	ev := r.makeEvent(obj, eventType, reason, fmt.Sprintf(format, args...), now)
	select {
	case r.incoming <- occurrence{ev: ev, at: now}:
	default:
		if n := r.dropped.Add(1); n == 1 || n%1000 == 0 {
			r.log.Warn("event buffer full, events dropped", "dropped", n)
		}
	}
}

// Dropped is how many events Eventf dropped because the buffer was full.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// RateLimited is how many events the per-object spam filter dropped.
func (r *Recorder) RateLimited() uint64 { return r.limited.Load() }

// Written is how many Event writes (creates and patches) succeeded.
func (r *Recorder) Written() uint64 { return r.written.Load() }

// occurrence is one Eventf call: the Event as first written and when.
type occurrence struct {
	ev *api.Event
	at time.Time
}

// makeEvent builds the Event for one occurrence at now.
func (r *Recorder) makeEvent(obj api.Object, eventType, reason, message string, now time.Time) *api.Event {
	tm := *obj.GetTypeMeta()
	if tm.Kind == "" || tm.APIVersion == "" {
		if known, ok := r.kinds[reflect.TypeOf(obj)]; ok {
			tm = known
		}
	}
	m := obj.GetObjectMeta()
	ns := m.Namespace
	if ns == "" {
		ns = "default" // events about cluster-scoped objects, as Kubernetes
	}
	return &api.Event{
		ObjectMeta: api.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", m.Name, now.UnixNano()),
			Namespace: ns,
		},
		InvolvedObject: api.ObjectReference{
			Kind: tm.Kind, APIVersion: tm.APIVersion, Name: m.Name, Namespace: m.Namespace,
			UID: m.UID, ResourceVersion: m.ResourceVersion,
		},
		Reason:              reason,
		Message:             message,
		Type:                eventType,
		Source:              api.EventSource{Component: r.component},
		ReportingController: r.component,
		FirstTimestamp:      api.NewTime(now),
		LastTimestamp:       api.NewTime(now),
		Count:               1,
	}
}

// Run writes queued events until ctx ends, then returns nil; events still
// queued are not written. Run may be called once.
func (r *Recorder) Run(ctx context.Context) error {
	if r == nil {
		<-ctx.Done()
		return nil
	}
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	if r.events == nil {
		return errors.New("record: resource table has no events")
	}
	corr := newCorrelator()
	for {
		select {
		case <-ctx.Done():
			return nil
		case o := <-r.incoming:
			r.process(ctx, corr, o.ev, o.at)
			r.handled.Add(1)
		}
	}
}

// process correlates and writes one event.
func (r *Recorder) process(ctx context.Context, corr *correlator, ev *api.Event, at time.Time) {
	switch corr.observe(ev, at) {
	case decideDrop:
		if n := r.limited.Add(1); n == 1 || n%100 == 0 {
			r.log.Info("events rate-limited", "object", ev.InvolvedObject.Name, "reason", ev.Reason, "limited", n)
		}
		return
	case decidePatch:
		err := r.patch(ctx, ev)
		if client.IsNotFound(err) {
			// The Event was deleted (or expired): write it anew.
			ev.Name = fmt.Sprintf("%s.%x", ev.InvolvedObject.Name, at.UnixNano())
			corr.restart(ev, at)
			err = r.create(ctx, ev)
		}
		if err != nil {
			corr.forget(ev)
			r.logFailure(ctx, ev, err)
			return
		}
	case decideCreate:
		if err := r.create(ctx, ev); err != nil {
			corr.forget(ev)
			r.logFailure(ctx, ev, err)
			return
		}
	}
	r.written.Add(1)
}

func (r *Recorder) logFailure(ctx context.Context, ev *api.Event, err error) {
	if ctx.Err() != nil {
		return
	}
	r.log.Warn("event not written", "event", ev.Namespace+"/"+ev.Name, "reason", ev.Reason, "err", err)
}

// create POSTs ev, retrying transient failures.
func (r *Recorder) create(ctx context.Context, ev *api.Event) error {
	return r.retry(ctx, func() error {
		out := *ev
		err := r.w.Create(ctx, r.events, ev.Namespace, &out)
		if client.IsAlreadyExists(err) {
			return nil // a retry of a create that went through
		}
		return err
	})
}

// patch increments the stored Event's count and lastTimestamp.
func (r *Recorder) patch(ctx context.Context, ev *api.Event) error {
	body, err := json.Marshal(map[string]any{
		"count":         ev.Count,
		"lastTimestamp": ev.LastTimestamp,
	})
	if err != nil {
		return fmt.Errorf("record: encode patch: %w", err)
	}
	return r.retry(ctx, func() error {
		return r.w.Patch(ctx, r.events, ev.Namespace, ev.Name, client.MergePatchType, body, nil)
	})
}

// retry runs write up to writeAttempts times while it fails with a
// transient error (not a 4xx other than 409 Conflict / 429), backing off
// between attempts; it stops when ctx ends.
func (r *Recorder) retry(ctx context.Context, write func() error) error {
	delay := retryBase
	var err error
	for attempt := range writeAttempts {
		if err = write(); err == nil || !transient(err) || attempt == writeAttempts-1 {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay *= 2
	}
	return err
}

// transient reports whether a failed write is worth retrying: transport
// errors and server-side failures, not a rejected request.
func transient(err error) bool {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return !errors.Is(err, client.ErrInvalidRequest) && !errors.Is(err, context.Canceled) &&
			!errors.Is(err, context.DeadlineExceeded)
	}
	code := ae.Status.Code
	return code >= 500 || code == 429 || client.IsConflict(err)
}
