package reflector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// ListWatcher is what the reflector needs of the API client.
type ListWatcher interface {
	List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error
	Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error)
}

// Meta is the metadata the controllers need of any object.
type Meta struct {
	Name              string               `json:"name,omitempty"`
	Namespace         string               `json:"namespace,omitempty"`
	UID               string               `json:"uid,omitempty"`
	ResourceVersion   string               `json:"resourceVersion,omitempty"`
	DeletionTimestamp *api.Time            `json:"deletionTimestamp,omitempty"`
	OwnerReferences   []api.OwnerReference `json:"ownerReferences,omitempty"`
	Finalizers        []string             `json:"finalizers,omitempty"`
}

// Decode reads the metadata of a JSON object.
func Decode(raw []byte) (Meta, error) {
	var obj struct {
		Metadata Meta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Meta{}, fmt.Errorf("reflector: decode metadata: %w", err)
	}
	return obj.Metadata, nil
}

// usable reports whether m identifies an object.
func usable(m Meta) bool { return m.UID != "" && m.Name != "" }

// Handler receives the reflector's view of one resource.
type Handler interface {
	// Replace gives the complete set of objects after a (re)list.
	Replace(info *api.ResourceInfo, objs []Meta)
	// Upsert is an added or modified object.
	Upsert(info *api.ResourceInfo, obj Meta)
	// Delete is a deleted object (its last state).
	Delete(info *api.ResourceInfo, obj Meta)
}

// Defaults of Reflector's tunables.
const (
	DefaultPageSize    = 500
	DefaultBackoffBase = 100 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
)

// Reflector lists and watches one resource in all namespaces.
type Reflector struct {
	lw      ListWatcher
	info    *api.ResourceInfo
	handler Handler
	log     *slog.Logger

	// PageSize, BackoffBase and BackoffMax may be changed before Run.
	PageSize    int64
	BackoffBase time.Duration
	BackoffMax  time.Duration

	synced     chan struct{}
	syncedOnce sync.Once
}

// New returns a reflector for info; logger may be nil.
func New(lw ListWatcher, info *api.ResourceInfo, handler Handler, logger *slog.Logger) *Reflector {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reflector{
		lw: lw, info: info, handler: handler,
		log:         logger.With("resource", info.GroupVersion()+"/"+info.Resource),
		PageSize:    DefaultPageSize,
		BackoffBase: DefaultBackoffBase,
		BackoffMax:  DefaultBackoffMax,
		synced:      make(chan struct{}),
	}
}

// Synced is closed once the first list has been handed to Replace.
func (r *Reflector) Synced() <-chan struct{} { return r.synced }

// errWatchIdle marks a watch the server ended without delivering anything.
var errWatchIdle = errors.New("watch ended without events")

// Run lists and watches until ctx ends.
func (r *Reflector) Run(ctx context.Context) {
	rv := ""
	failures := 0
	for ctx.Err() == nil {
		if rv == "" {
			objs, listRV, err := r.list(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.Warn("list failed", "err", err)
				r.sleep(ctx, &failures)
				continue
			}
			r.handler.Replace(r.info, objs)
			r.syncedOnce.Do(func() { close(r.synced) })
			rv, failures = listRV, 0
		}
		next, err := r.watch(ctx, rv)
		if next != "" {
			rv = next
		}
		switch {
		case ctx.Err() != nil:
			return
		case client.IsGone(err):
			r.log.Info("watch revision compacted, relisting", "resourceVersion", rv)
			rv = ""
		case errors.Is(err, errWatchIdle):
			r.sleep(ctx, &failures)
		case err != nil:
			r.log.Warn("watch failed", "err", err)
			r.sleep(ctx, &failures)
		default:
			failures = 0
		}
	}
}

// sleep waits the back-off for the next failure or until ctx ends.
func (r *Reflector) sleep(ctx context.Context, failures *int) {
	d := r.BackoffBase
	for i := 0; i < *failures && d < r.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, r.BackoffMax)
	*failures++
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// list reads every object, page by page; an expired continue token restarts
// the list.
func (r *Reflector) list(ctx context.Context) ([]Meta, string, error) {
	for attempt := 0; ; attempt++ {
		var objs []Meta
		opts := client.ListOptions{Limit: r.PageSize}
		rv := ""
		for {
			var page client.RawList
			err := r.lw.List(ctx, r.info, "", opts, &page)
			if client.IsGone(err) && opts.Continue != "" && attempt < 3 {
				break // continue token expired: start over
			}
			if err != nil {
				return nil, "", fmt.Errorf("reflector: list %s: %w", r.info.Resource, err)
			}
			if rv == "" {
				rv = page.Metadata.ResourceVersion
			}
			for _, raw := range page.Items {
				m, err := Decode(raw)
				if err != nil || !usable(m) {
					// Skipped, never guessed at: controllers leave it alone.
					r.log.Warn("skipping undecodable object", "err", err, "name", m.Name)
					continue
				}
				objs = append(objs, m)
			}
			if page.Metadata.Continue == "" {
				if rv == "" {
					return nil, "", fmt.Errorf("reflector: list %s: no resourceVersion", r.info.Resource)
				}
				return objs, rv, nil
			}
			opts.Continue = page.Metadata.Continue
		}
	}
}

// watch follows one watch stream from rv and returns the last revision
// seen and why the stream ended (nil: the server ended it cleanly).
func (r *Reflector) watch(ctx context.Context, rv string) (string, error) {
	w, err := r.lw.Watch(ctx, r.info, "", client.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return "", fmt.Errorf("reflector: watch %s: %w", r.info.Resource, err)
	}
	defer w.Stop()
	last, events := "", 0
	for ev := range w.ResultChan() {
		events++
		switch ev.Type {
		case client.EventError:
			return last, fmt.Errorf("reflector: watch %s: %w", r.info.Resource, ev.Err())
		case client.EventBookmark:
			var obj struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(ev.Object, &obj); err == nil && obj.Metadata.ResourceVersion != "" {
				last = obj.Metadata.ResourceVersion
			}
		case client.EventAdded, client.EventModified, client.EventDeleted:
			m, err := Decode(ev.Object)
			if err != nil || !usable(m) {
				r.log.Warn("skipping undecodable watch event", "type", ev.Type, "err", err, "name", m.Name)
				if m.ResourceVersion != "" {
					last = m.ResourceVersion
				}
				continue
			}
			if ev.Type == client.EventDeleted {
				r.handler.Delete(r.info, m)
			} else {
				r.handler.Upsert(r.info, m)
			}
			last = m.ResourceVersion
		default:
			r.log.Warn("unknown watch event type", "type", ev.Type)
		}
	}
	if err := w.Err(); err != nil {
		return last, fmt.Errorf("reflector: watch %s: %w", r.info.Resource, err)
	}
	if events == 0 {
		return last, errWatchIdle
	}
	return last, nil
}
