package metricsapi

import (
	"sync"
	"time"
)

// Batch is one round of scrapes: every node that answered.
type Batch map[string]NodeScrape

// pair is a series' last point and the previous one (ok: prev is set).
type pair struct {
	last, prev Point
	ok         bool
}

// Usage is a rate computed from a pair.
type Usage struct {
	Timestamp   time.Time
	Window      time.Duration
	NanoCores   uint64
	MemoryBytes uint64
}

// Store keeps the last two points of each node and container (see the
// package doc for the rules). Safe for concurrent use.
type Store struct {
	mu         sync.RWMutex
	nodes      map[string]pair
	containers map[ContainerKey]pair
	pods       map[PodKey][]string // the containers each pod reported last
}

// NewStore is an empty Store.
func NewStore() *Store {
	return &Store{nodes: map[string]pair{}, containers: map[ContainerKey]pair{}, pods: map[PodKey][]string{}}
}

// next is the pair after adding p to old (found: old exists).
func next(old pair, found bool, p Point) pair {
	if !found {
		return pair{last: p}
	}
	if !p.StartTime.Equal(old.last.StartTime) {
		return pair{last: p} // restarted: the counter began again
	}
	switch {
	case p.Timestamp.After(old.last.Timestamp):
		if p.CPUNanoseconds < old.last.CPUNanoseconds {
			return pair{last: p} // a reset
		}
		return pair{last: p, prev: old.last, ok: true}
	case old.ok && old.prev.Timestamp.Before(p.Timestamp) && p.CPUNanoseconds >= old.prev.CPUNanoseconds:
		return pair{last: p, prev: old.prev, ok: true}
	default:
		return pair{last: p}
	}
}

// Add stores a batch: series absent from it are forgotten.
func (s *Store) Add(b Batch) {
	nodes := make(map[string]pair, len(b))
	containers := map[ContainerKey]pair{}
	pods := map[PodKey][]string{}
	s.mu.RLock()
	for name, ns := range b {
		if ns.Node != nil {
			old, found := s.nodes[name]
			nodes[name] = next(old, found, *ns.Node)
		}
		for k, p := range ns.Containers {
			old, found := s.containers[k]
			containers[k] = next(old, found, p)
			pk := PodKey{k.Namespace, k.Pod}
			pods[pk] = append(pods[pk], k.Container)
		}
	}
	s.mu.RUnlock()
	s.mu.Lock()
	s.nodes, s.containers, s.pods = nodes, containers, pods
	s.mu.Unlock()
}

// rate is the usage of a pair; false without two points.
func rate(p pair) (Usage, bool) {
	if !p.ok {
		return Usage{}, false
	}
	w := p.last.Timestamp.Sub(p.prev.Timestamp)
	if w <= 0 || p.last.CPUNanoseconds < p.prev.CPUNanoseconds {
		return Usage{}, false
	}
	nc := float64(p.last.CPUNanoseconds-p.prev.CPUNanoseconds) / w.Seconds()
	return Usage{Timestamp: p.last.Timestamp, Window: w, NanoCores: uint64(nc), MemoryBytes: p.last.MemoryBytes}, true
}

// Node is the usage of a node; false when it has no two points.
func (s *Store) Node(name string) (Usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return rate(s.nodes[name])
}

// ContainerUsage is one container's usage in a PodUsage.
type ContainerUsage struct {
	Name string
	Usage
}

// PodUsage is a pod's usage: its containers, sorted by name, with the
// latest timestamp and the longest window of theirs.
type PodUsage struct {
	Timestamp  time.Time
	Window     time.Duration
	Containers []ContainerUsage
}

// Pod is the usage of a pod; false unless every container it reported
// has two points.
func (s *Store) Pod(k PodKey) (PodUsage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := s.pods[k]
	if len(names) == 0 {
		return PodUsage{}, false
	}
	var out PodUsage
	for _, n := range names {
		u, ok := rate(s.containers[ContainerKey{k.Namespace, k.Name, n}])
		if !ok {
			return PodUsage{}, false
		}
		out.Containers = append(out.Containers, ContainerUsage{Name: n, Usage: u})
		if u.Timestamp.After(out.Timestamp) {
			out.Timestamp = u.Timestamp
		}
		if u.Window > out.Window {
			out.Window = u.Window
		}
	}
	sortContainers(out.Containers)
	return out, true
}
