package source

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/dns"
)

// Source keeps a dns.Store in step with three informers.
type Source struct {
	store                  *dns.Store
	services, slices, pods *client.Informer
	log                    *slog.Logger
}

// New registers handlers on the informers that apply every Service,
// EndpointSlice and Pod change to store. Call it before the informers
// start, then Run. log may be nil.
func New(store *dns.Store, services, slices, pods *client.Informer, log *slog.Logger) *Source {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{store: store, services: services, slices: slices, pods: pods, log: log.With("component", "dns-source")}
	services.AddEventHandler(client.HandlerFuncs{
		AddFunc:    s.upsertService,
		UpdateFunc: func(_, obj api.Object) { s.upsertService(obj) },
		DeleteFunc: s.deleteService,
	})
	slices.AddEventHandler(client.HandlerFuncs{
		AddFunc:    s.upsertSlice,
		UpdateFunc: func(_, obj api.Object) { s.upsertSlice(obj) },
		DeleteFunc: s.deleteSlice,
	})
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    s.upsertPod,
		UpdateFunc: func(_, obj api.Object) { s.upsertPod(obj) },
		DeleteFunc: s.deletePod,
	})
	return s
}

// Run waits until the three informers have synced, then marks the Store
// synced and returns nil. It returns an error when ctx ends first (the
// Store then stays unsynced).
func (s *Source) Run(ctx context.Context) error {
	if !client.WaitForCacheSync(ctx, s.services.HasSynced, s.slices.HasSynced, s.pods.HasSynced) {
		return fmt.Errorf("dns source: informers not synced: %w", ctx.Err())
	}
	s.store.SetSynced(true)
	st := s.store.Stats()
	s.log.Info("dns store synced", "services", st.Services, "endpointSlices", st.EndpointSlices, "pods", st.Pods)
	return nil
}

func (s *Source) upsertService(obj api.Object) {
	svc, ok := obj.(*api.Service)
	if !ok {
		s.unexpected(obj)
		return
	}
	if err := s.store.UpsertService(ServiceFrom(svc)); err != nil {
		s.log.Warn("service not served", "namespace", svc.Namespace, "name", svc.Name, "err", err)
		s.store.DeleteService(svc.Namespace, svc.Name)
	}
}

func (s *Source) deleteService(obj api.Object) {
	m := obj.GetObjectMeta()
	s.store.DeleteService(m.Namespace, m.Name)
}

func (s *Source) upsertSlice(obj api.Object) {
	es, ok := obj.(*api.EndpointSlice)
	if !ok {
		s.unexpected(obj)
		return
	}
	d, ok := EndpointSliceFrom(es)
	if !ok {
		s.store.DeleteEndpointSlice(es.Namespace, es.Name)
		return
	}
	if err := s.store.UpsertEndpointSlice(d); err != nil {
		s.log.Warn("endpointslice not served", "namespace", es.Namespace, "name", es.Name, "err", err)
		s.store.DeleteEndpointSlice(es.Namespace, es.Name)
	}
}

func (s *Source) deleteSlice(obj api.Object) {
	m := obj.GetObjectMeta()
	s.store.DeleteEndpointSlice(m.Namespace, m.Name)
}

func (s *Source) upsertPod(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		s.unexpected(obj)
		return
	}
	d, ok := PodFrom(p)
	if !ok {
		s.store.DeletePod(p.Namespace, p.Name)
		return
	}
	if err := s.store.UpsertPod(d); err != nil {
		s.log.Warn("pod not served", "namespace", p.Namespace, "name", p.Name, "err", err)
		s.store.DeletePod(p.Namespace, p.Name)
	}
}

func (s *Source) deletePod(obj api.Object) {
	m := obj.GetObjectMeta()
	s.store.DeletePod(m.Namespace, m.Name)
}

func (s *Source) unexpected(obj api.Object) {
	s.log.Error("unexpected object type", "type", fmt.Sprintf("%T", obj))
}
