package endpointslice

import (
	"slices"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// deletionExpected marks a slice the controller deleted.
const deletionExpected = -1

// sliceTracker remembers the generation of every slice the controller
// wrote, per Service, so that a sync never acts on a watch cache older
// than its own writes (Kubernetes' EndpointSliceTracker). The API server
// bumps an EndpointSlice's generation whenever its endpoints, ports or
// labels change, which is every write the controller makes but an
// annotation-only one.
type sliceTracker struct {
	mu sync.Mutex
	// gens: service key -> slice UID -> generation written, or
	// deletionExpected.
	gens map[string]map[string]int64
	// uids: service key -> UID of the Service the generations belong to.
	uids map[string]string
}

func newSliceTracker() *sliceTracker {
	return &sliceTracker{gens: map[string]map[string]int64{}, uids: map[string]string{}}
}

// serviceKeyOf is namespace/name of the Service a slice is labelled with.
func serviceKeyOf(s *api.EndpointSlice) string {
	return s.Namespace + "/" + s.Labels[api.LabelServiceName]
}

// Has reports whether s is tracked.
func (t *sliceTracker) Has(s *api.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.gens[serviceKeyOf(s)][s.UID]
	return ok
}

// ShouldSync reports whether a cache event for s is news to the
// controller: s is untracked or newer than what the controller wrote.
func (t *sliceTracker) ShouldSync(s *api.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.gens[serviceKeyOf(s)][s.UID]
	return !ok || s.Generation > g
}

// Stale reports whether the cached slices of svc are older than the
// controller's own writes: a slice older than the generation written, a
// slice the controller deleted still present, or a slice it wrote
// missing. The generations of an earlier Service of the same name
// (another UID) are forgotten first.
func (t *sliceTracker) Stale(svc *api.Service, cached []*api.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := svc.Namespace + "/" + svc.Name
	if uid, ok := t.uids[key]; ok && uid != "" && svc.UID != "" && uid != svc.UID {
		delete(t.gens, key)
	}
	t.uids[key] = svc.UID
	gens, ok := t.gens[key]
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(cached))
	for _, s := range cached {
		seen[s.UID] = true
		if g, ok := gens[s.UID]; ok && (g == deletionExpected || g > s.Generation) {
			return true
		}
	}
	for uid, g := range gens {
		if g != deletionExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// Unseen reports whether the controller wrote a slice for the Service
// key that cached does not hold yet (the cache lags its creates).
func (t *sliceTracker) Unseen(key string, cached []*api.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for uid, g := range t.gens[key] {
		if g != deletionExpected && !slices.ContainsFunc(cached, func(s *api.EndpointSlice) bool { return s.UID == uid }) {
			return true
		}
	}
	return false
}

// Wrote records the generation of a slice the controller created or
// updated (as the API server returned it).
func (t *sliceTracker) Wrote(s *api.EndpointSlice) { t.set(s, s.Generation) }

// ExpectDeletion records that the controller deleted s.
func (t *sliceTracker) ExpectDeletion(s *api.EndpointSlice) { t.set(s, deletionExpected) }

func (t *sliceTracker) set(s *api.EndpointSlice, g int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := serviceKeyOf(s)
	gens, ok := t.gens[key]
	if !ok {
		gens = map[string]int64{}
		t.gens[key] = gens
	}
	gens[s.UID] = g
}

// HandleDeletion forgets a deleted slice and reports whether the
// controller expected the deletion (false: someone else deleted it).
func (t *sliceTracker) HandleDeletion(s *api.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens, ok := t.gens[serviceKeyOf(s)]
	if !ok {
		return true
	}
	g, ok := gens[s.UID]
	delete(gens, s.UID)
	return !ok || g == deletionExpected
}

// DeleteService forgets a Service.
func (t *sliceTracker) DeleteService(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.gens, key)
	delete(t.uids, key)
}

// triggerTracker computes the last-change trigger time of a sync, as
// Kubernetes' TriggerTimeTracker: the earliest pod Ready transition
// (lastTransitionTime of the Ready condition) not seen by the previous
// sync of the Service, or the Service's creation time on its first sync.
// A transition counts as new when its time is later than the one seen
// before or when the Ready status differs from the one seen before (the
// time has second precision, so two transitions may share it). Like
// Kubernetes it can be wrong when one pod changes twice between two
// syncs; it is an approximation meant for latency measurement.
type triggerTracker struct {
	mu     sync.Mutex
	states map[string]*triggerState
}

type triggerState struct {
	service time.Time
	pods    map[string]*podTrigger // by pod name
	gen     uint64                 // of the last Compute
}

// podTrigger is a pod's Ready condition as a sync saw it.
type podTrigger struct {
	pod   *api.Pod  // the object last seen (unchanged objects are skipped)
	at    time.Time // lastTransitionTime
	ready bool
	seen  uint64 // the generation of the last Compute that saw the pod
}

func newTriggerTracker() *triggerTracker {
	return &triggerTracker{states: map[string]*triggerState{}}
}

// podTriggerTime is the time of the pod's last Ready transition.
func podTriggerTime(pod *api.Pod) time.Time {
	if c := api.GetPodCondition(&pod.Status, api.PodReady); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// Compute records the state of svc and its pods and returns the trigger
// time of this sync (zero when nothing new triggered it). It must not be
// called concurrently for one Service (the work queue guarantees that).
func (t *triggerTracker) Compute(svc *api.Service, pods []*api.Pod) time.Time {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	state, known := t.states[key]
	if !known {
		state = &triggerState{pods: make(map[string]*podTrigger, len(pods))}
		t.states[key] = state
	}
	t.mu.Unlock()

	state.gen++
	var earliest time.Time
	note := func(tt time.Time) {
		if earliest.IsZero() || tt.Before(earliest) {
			earliest = tt
		}
	}
	for _, pod := range pods {
		prev := state.pods[pod.Name]
		if prev != nil && prev.pod == pod {
			prev.seen = state.gen
			continue
		}
		at := podTriggerTime(pod)
		if at.IsZero() {
			continue
		}
		ready := api.IsPodReady(pod)
		if prev == nil {
			prev = &podTrigger{}
			state.pods[pod.Name] = prev
			note(at)
		} else if at.After(prev.at) || ready != prev.ready {
			note(at)
		}
		prev.pod, prev.at, prev.ready, prev.seen = pod, at, ready, state.gen
	}
	for name, p := range state.pods {
		if p.seen != state.gen {
			delete(state.pods, name)
		}
	}
	created := svc.CreationTimestamp.Time
	if created.After(state.service) {
		note(created)
	}
	state.service = created
	if !known {
		return created
	}
	return earliest
}

// DeleteService forgets a Service.
func (t *triggerTracker) DeleteService(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, key)
}
