package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// listAndWatch is the informer's loop: list when it has no usable
// resourceVersion, else watch from it; it returns when ctx ends.
func (i *Informer) listAndWatch(ctx context.Context) {
	needList := true
	rv := ""
	failures := 0
	for ctx.Err() == nil {
		if needList {
			objs, listRV, err := i.list(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				i.log.Warn("list failed", "err", err)
				i.sleep(ctx, &failures)
				continue
			}
			i.replace(objs, listRV)
			rv, needList = listRV, false
		}
		started := time.Now()
		next, events, err := i.watch(ctx, rv)
		rv = next
		if events > 0 {
			failures = 0 // the watch made progress: this is a fresh failure
		}
		switch {
		case ctx.Err() != nil:
			return
		case IsGone(err):
			// The server no longer has the history after rv: relist at
			// once, unless the last attempt failed too (a server that
			// compacts faster than we list), then after the back-off.
			i.log.Info("watch resourceVersion is gone, relisting", "resourceVersion", rv, "err", err)
			needList = true
			if failures > 0 {
				i.sleep(ctx, &failures)
			} else {
				failures++
			}
		case err != nil:
			i.log.Warn("watch failed, resuming", "resourceVersion", rv, "err", err)
			i.sleep(ctx, &failures)
		case events == 0 && time.Since(started) < shortWatch:
			i.log.Warn("watch ended at once without events, resuming", "resourceVersion", rv)
			i.sleep(ctx, &failures)
		default:
			failures = 0 // a watch that ran its course: resume at once
		}
	}
}

// sleep waits the jittered back-off of the next failure, or until ctx ends.
func (i *Informer) sleep(ctx context.Context, failures *int) {
	d := i.backoffBase
	for n := 0; n < *failures && d < i.backoffMax; n++ {
		d *= 2
	}
	d = min(d, i.backoffMax)
	*failures++
	// Jitter: a random point in [d/2, d), so informers that failed
	// together do not retry together.
	if half := d / 2; half > 0 {
		d = half + rand.N(half)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// decode builds a typed object from JSON and fills an empty apiVersion and
// kind from info.
func (i *Informer) decode(raw []byte) (api.Object, error) {
	obj := i.info.New() // Run checked that New is set
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, err
	}
	if obj.GetObjectMeta().Name == "" {
		return nil, errors.New("object without metadata.name")
	}
	setTypeMeta(i.info, obj)
	return obj, nil
}

// list reads the complete collection page by page; an expired continue
// token restarts it from the first page.
func (i *Informer) list(ctx context.Context) ([]api.Object, string, error) {
	for attempt := 0; ; attempt++ {
		opts := ListOptions{LabelSelector: i.opts.LabelSelector, FieldSelector: i.opts.FieldSelector, Limit: i.pageSize}
		var objs []api.Object
		rv := ""
		restart := false
		for {
			var page RawList
			err := i.lw.List(ctx, i.info, i.opts.Namespace, opts, &page)
			if err != nil && IsGone(err) && opts.Continue != "" && attempt < 3 {
				restart = true
				break
			}
			if err != nil {
				return nil, "", fmt.Errorf("client: informer %s: list: %w", i.info.Resource, err)
			}
			if rv == "" {
				rv = page.Metadata.ResourceVersion
			}
			for _, raw := range page.Items {
				obj, err := i.decode(raw)
				if err != nil {
					// Skipped, never guessed at; the next relist retries it.
					i.log.Warn("skipping undecodable object in list", "err", err)
					continue
				}
				objs = append(objs, obj)
			}
			if page.Metadata.Continue == "" {
				break
			}
			opts.Continue = page.Metadata.Continue
		}
		if restart {
			i.log.Info("list continue token expired, listing again")
			continue
		}
		if rv == "" {
			return nil, "", fmt.Errorf("client: informer %s: list: response without resourceVersion", i.info.Resource)
		}
		return objs, rv, nil
	}
}

// watch follows one watch from rv, applying its events to the cache. It
// returns the last resourceVersion seen, the number of object and bookmark
// events and why the
// stream ended: nil when the server closed it cleanly, an IsGone error
// when rv is no longer available.
func (i *Informer) watch(ctx context.Context, rv string) (string, int, error) {
	timeout := int64((minWatchTimeout + rand.N(minWatchTimeout)) / time.Second)
	w, err := i.lw.Watch(ctx, i.info, i.opts.Namespace, ListOptions{
		LabelSelector:       i.opts.LabelSelector,
		FieldSelector:       i.opts.FieldSelector,
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
	})
	if err != nil {
		return rv, 0, fmt.Errorf("client: informer %s: watch: %w", i.info.Resource, err)
	}
	defer w.Stop()
	events := 0 // objects and bookmarks: progress
	for ev := range w.ResultChan() {
		switch ev.Type {
		case EventError:
			return rv, events, fmt.Errorf("client: informer %s: watch: %w", i.info.Resource, ev.Err())
		case EventBookmark:
			var b struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(ev.Object, &b); err != nil || b.Metadata.ResourceVersion == "" {
				i.log.Warn("ignoring bookmark without resourceVersion", "err", err)
				continue
			}
			rv = b.Metadata.ResourceVersion
			i.setRV(rv)
			events++
		case EventAdded, EventModified, EventDeleted:
			events++
			obj, err := i.decode(ev.Object)
			if err != nil {
				// Skip it but keep its place in the stream, so resuming
				// neither repeats nor loses the events around it.
				i.log.Warn("skipping undecodable watch event", "type", ev.Type, "err", err)
				var m struct {
					Metadata api.ObjectMeta `json:"metadata"`
				}
				if json.Unmarshal(ev.Object, &m) == nil && m.Metadata.ResourceVersion != "" {
					rv = m.Metadata.ResourceVersion
					i.setRV(rv)
				}
				continue
			}
			if next := obj.GetObjectMeta().ResourceVersion; next != "" {
				rv = next
			}
			if ev.Type == EventDeleted {
				i.remove(obj, rv)
			} else {
				i.upsert(obj, rv)
			}
		default:
			i.log.Warn("ignoring watch event of unknown type", "type", ev.Type)
		}
	}
	if err := w.Err(); err != nil {
		return rv, events, fmt.Errorf("client: informer %s: watch: %w", i.info.Resource, err)
	}
	return rv, events, nil
}
