package record

import (
	"slices"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Defaults of the correlator, as Kubernetes' event correlator (spam filter:
// burst 25, one token every 5 minutes per object and reason; aggregation
// of repeats).
const (
	// AggregationWindow is how long after its last occurrence an event can
	// still be counted again instead of being written anew.
	AggregationWindow = 10 * time.Minute
	// SpamBurst is how many events one object may get at once.
	SpamBurst = 25
	// SpamRefill is how often one object earns back one event.
	SpamRefill = 5 * time.Minute
	// maxEntries bounds the aggregation cache and the token buckets.
	maxEntries = 4096
)

// decision is what the sender does with one event.
type decision int

const (
	decideDrop   decision = iota // rate-limited: not written
	decideCreate                 // POST a new Event
	decidePatch                  // PATCH count and lastTimestamp of an existing Event
)

func (d decision) String() string {
	switch d {
	case decideCreate:
		return "create"
	case decidePatch:
		return "patch"
	default:
		return "drop"
	}
}

// objectKey identifies the involved object of an event (the spam filter's
// unit).
type objectKey struct {
	kind, apiVersion, namespace, name, uid string
	// reason: unlike Kubernetes, each reason has its own spam bucket. Skiff's
	// Deployment controller records pod creates and deletes on the
	// Deployment itself (there are no ReplicaSets to carry them), so one
	// busy rollout would otherwise silence a later Warning on the object.
	reason string
}

// aggregateKey identifies a repeatable event: the same component, object,
// type, reason and message.
type aggregateKey struct {
	component string
	object    objectKey
	eventType string
	reason    string
	message   string
}

// aggregate is one Event as written: its name, namespace, count and times.
type aggregate struct {
	name, namespace string
	count           int32
	first, last     time.Time
}

// bucket is a token bucket of one object.
type bucket struct {
	tokens float64
	last   time.Time
}

// correlator decides, event by event, whether to create, patch or drop. It
// is owned by the sender goroutine (no locking).
type correlator struct {
	window     time.Duration
	burst      float64
	refill     time.Duration
	maxEntries int

	bucketLimit int
	aggregates  map[aggregateKey]*aggregate
	buckets     map[objectKey]*bucket
}

func newCorrelator() *correlator {
	return &correlator{
		window:     AggregationWindow,
		burst:      SpamBurst,
		refill:     SpamRefill,
		maxEntries: maxEntries,
		aggregates: map[aggregateKey]*aggregate{},
		buckets:    map[objectKey]*bucket{},
	}
}

func keysOf(ev *api.Event) (objectKey, aggregateKey) {
	o := objectKey{
		kind: ev.InvolvedObject.Kind, apiVersion: ev.InvolvedObject.APIVersion,
		namespace: ev.InvolvedObject.Namespace, name: ev.InvolvedObject.Name, uid: ev.InvolvedObject.UID,
		reason: ev.Reason,
	}
	return o, aggregateKey{component: ev.Source.Component, object: o, eventType: ev.Type, reason: ev.Reason, message: ev.Message}
}

// observe decides what to do with ev, which happened at now. For a patch it
// rewrites ev's name, count and firstTimestamp to those of the Event being
// counted; for a create it sets count 1. The decision is recorded as if the
// write succeeds; call forget when it does not.
func (c *correlator) observe(ev *api.Event, now time.Time) decision {
	obj, key := keysOf(ev)
	c.sweep(now)
	if !c.take(obj, now) {
		return decideDrop
	}
	if a, ok := c.aggregates[key]; ok && now.Sub(a.last) <= c.window {
		a.count++
		a.last = now
		ev.Name, ev.Namespace = a.name, a.namespace
		ev.Count = a.count
		ev.FirstTimestamp = api.NewTime(a.first)
		ev.LastTimestamp = api.NewTime(now)
		return decidePatch
	}
	ev.Count = 1
	c.aggregates[key] = &aggregate{name: ev.Name, namespace: ev.Namespace, count: 1, first: now, last: now}
	return decideCreate
}

// restart records that ev (a patch whose Event has gone) is being written
// as a new Event: its aggregate starts over from ev.
func (c *correlator) restart(ev *api.Event, now time.Time) {
	_, key := keysOf(ev)
	ev.Count = 1
	ev.FirstTimestamp = api.NewTime(now)
	ev.LastTimestamp = api.NewTime(now)
	c.aggregates[key] = &aggregate{name: ev.Name, namespace: ev.Namespace, count: 1, first: now, last: now}
}

// forget drops what observe recorded for ev after its write failed, so the
// next occurrence is written anew.
func (c *correlator) forget(ev *api.Event) {
	_, key := keysOf(ev)
	if a, ok := c.aggregates[key]; ok && a.name == ev.Name {
		delete(c.aggregates, key)
	}
}

// take spends one token of obj's bucket, refilled at one token per refill
// up to burst; false when the bucket is empty.
func (c *correlator) take(obj objectKey, now time.Time) bool {
	b, ok := c.buckets[obj]
	if !ok {
		b = &bucket{tokens: c.burst, last: now}
		c.buckets[obj] = b
	}
	c.fill(b, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (c *correlator) fill(b *bucket, now time.Time) {
	if elapsed := now.Sub(b.last); elapsed > 0 && c.refill > 0 {
		b.tokens = min(c.burst, b.tokens+float64(elapsed)/float64(c.refill))
		b.last = now
	}
}

// sweep bounds the caches. Once the aggregates exceed maxEntries, expired
// ones are removed, then the oldest until 3/4 of maxEntries are left. Once
// the buckets exceed maxEntries (or twice what the last sweep kept), full
// buckets, which carry no state, are removed.
func (c *correlator) sweep(now time.Time) {
	if len(c.buckets) > max(c.maxEntries, c.bucketLimit) {
		for k, b := range c.buckets {
			c.fill(b, now)
			if b.tokens >= c.burst {
				delete(c.buckets, k)
			}
		}
		// Buckets still filling are state worth keeping; sweep again only
		// once their number doubles, so sweeping stays amortised O(1).
		c.bucketLimit = 2 * len(c.buckets)
	}
	if len(c.aggregates) <= c.maxEntries {
		return
	}
	for k, a := range c.aggregates {
		if now.Sub(a.last) > c.window {
			delete(c.aggregates, k)
		}
	}
	if excess := len(c.aggregates) - c.maxEntries*3/4; excess > 0 {
		type aged struct {
			key  aggregateKey
			last time.Time
		}
		all := make([]aged, 0, len(c.aggregates))
		for k, a := range c.aggregates {
			all = append(all, aged{k, a.last})
		}
		slices.SortFunc(all, func(a, b aged) int { return a.last.Compare(b.last) })
		for _, a := range all[:excess] {
			delete(c.aggregates, a.key)
		}
	}
}
