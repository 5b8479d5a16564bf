package client

import (
	"context"
	"sync"

	"github.com/skiff-dev/skiff/api"
)

// SharedInformers hands out one Informer per (resource, namespace,
// selectors), so the components of one process share a single list+watch
// per resource, as client-go's shared informer factory does.
//
// Add indexers and handlers to the informers before Start; informers
// handed out after a Start run at the next Start.
type SharedInformers struct {
	c       *Client
	mu      sync.Mutex
	byKey   map[sharedKey]*Informer
	started map[*Informer]bool
	wg      sync.WaitGroup
}

type sharedKey struct {
	resource, group, ns, labels, fields string
}

// NewSharedInformers returns an empty set over c.
func NewSharedInformers(c *Client) *SharedInformers {
	return &SharedInformers{c: c, byKey: map[sharedKey]*Informer{}, started: map[*Informer]bool{}}
}

// For returns the shared informer for info and opts (ResyncPeriod and
// Logger are taken from the first caller).
func (f *SharedInformers) For(info *api.ResourceInfo, opts InformerOptions) *Informer {
	k := sharedKey{info.Resource, info.Group, opts.Namespace, opts.LabelSelector, opts.FieldSelector}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.byKey[k]; ok {
		return inf
	}
	inf := NewInformer(f.c, info, opts)
	f.byKey[k] = inf
	return inf
}

// Start runs every informer not yet running until ctx ends.
func (f *SharedInformers) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, inf := range f.byKey {
		if f.started[inf] {
			continue
		}
		f.started[inf] = true
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			_ = inf.Run(ctx) // returns nil when ctx ends; errors are retried inside
		}()
	}
}

// Synced reports whether every informer handed out so far has synced.
func (f *SharedInformers) Synced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, inf := range f.byKey {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// Wait blocks until every started informer has returned (after ctx ends).
func (f *SharedInformers) Wait() { f.wg.Wait() }
