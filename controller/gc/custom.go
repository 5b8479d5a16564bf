package gc

import (
	"context"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
)

// CustomResources is the changing set of custom resources, one entry per
// resource (apiextensions.Registry).
type CustomResources interface {
	// Current returns the resources now and a channel closed at the next
	// change.
	Current() ([]*api.ResourceInfo, <-chan struct{})
}

// customWatch is the reflector of one custom resource.
type customWatch struct {
	info   *api.ResourceInfo
	cancel context.CancelFunc
	done   chan struct{}
}

// resourceList is the resources now (built-in and custom).
func (c *Controller) resourceList() []*api.ResourceInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.resources)
}

// followCustom watches the custom resources as they come and go, as
// upstream's collector follows discovery: a new resource gets a reflector
// (its objects join the graph; workers already run, which is safe since
// nothing is deleted on the graph's word alone), a removed one loses its
// reflector and its objects leave the graph, so their dependents are
// synced (and collected once a live GET finds their owner gone).
func (c *Controller) followCustom(ctx context.Context) {
	watches := map[string]*customWatch{} // group/resource, as the graph keys them
	defer func() {
		for _, w := range watches {
			w.cancel()
			<-w.done
		}
	}()
	start := func(key string, info *api.ResourceInfo) {
		wctx, cancel := context.WithCancel(ctx)
		w := &customWatch{info: info, cancel: cancel, done: make(chan struct{})}
		watches[key] = w
		r := reflector.New(c.client, info, handler{c}, c.log)
		if c.reflectorBackoff > 0 {
			r.BackoffBase = c.reflectorBackoff
		}
		go func() {
			defer close(w.done)
			r.Run(wctx)
		}()
	}
	for {
		infos, changed := c.custom.Current()
		want := map[string]*api.ResourceInfo{}
		for _, info := range infos {
			want[resourceKey(info)] = info
		}
		// Additions (and a resource now preferred in another version,
		// whose new reflector's first list replaces what the old one
		// fed) before removals, so that a kind still served is never
		// taken for a removed one.
		for key, info := range want {
			w := watches[key]
			switch {
			case w == nil:
				c.addResource(info, nil)
				start(key, info)
			case w.info.GroupVersion() != info.GroupVersion() || w.info.Kind != info.Kind || w.info.Namespaced != info.Namespaced:
				w.cancel()
				<-w.done
				c.addResource(info, w.info)
				start(key, info)
			}
		}
		for key, w := range watches {
			if want[key] != nil {
				continue
			}
			w.cancel()
			<-w.done
			delete(watches, key)
			c.removeResource(w.info)
			for _, u := range c.graph.replace(w.info, nil) {
				c.queue.Add(u)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// addResource adds info to the resources, in place of old when not nil.
func (c *Controller) addResource(info, old *api.ResourceInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old != nil {
		c.resources = slices.DeleteFunc(c.resources, func(r *api.ResourceInfo) bool { return r == old })
		if c.byKind[old.Group+"/"+old.Kind] == old {
			delete(c.byKind, old.Group+"/"+old.Kind)
		}
	}
	c.resources = append(c.resources, info)
	c.byKind[info.Group+"/"+info.Kind] = info
	delete(c.removed, info.Group+"/"+info.Kind)
}

func (c *Controller) removeResource(info *api.ResourceInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resources = slices.DeleteFunc(c.resources, func(r *api.ResourceInfo) bool { return r == info })
	if c.byKind[info.Group+"/"+info.Kind] == info {
		delete(c.byKind, info.Group+"/"+info.Kind)
		c.removed[info.Group+"/"+info.Kind] = true
	}
}

// removedKind reports an owner reference to the kind of a custom resource
// that is no longer served. Its objects were deleted with its definition
// (package apiextensions), so no such owner exists; an owner kind never
// served stays unresolvable, which keeps its dependents.
func (c *Controller) removedKind(ref api.OwnerReference) bool {
	group := ""
	if g, _, ok := strings.Cut(ref.APIVersion, "/"); ok {
		group = g
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removed[group+"/"+ref.Kind]
}
