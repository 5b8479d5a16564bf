// Package record writes core/v1 Events about API objects for a component
// (a controller, the scheduler), as client-go's event recorder does.
//
// # Usage
//
//	rec := record.NewRecorder(c, "statefulset-controller", log)
//	go rec.Run(ctx)
//	rec.Eventf(set, api.EventTypeNormal, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful", pod, set.Name)
//
// # Invariants
//
//   - Eventf never blocks and never calls the API: it builds the Event and
//     queues it for the one sender goroutine (Run). When the queue
//     (BufferSize) is full the event is dropped and counted (Dropped).
//   - An Event lives in its object's namespace ("default" for
//     cluster-scoped objects) and is named <object name>.<hex UnixNano of
//     the occurrence>. involvedObject carries the object's kind,
//     apiVersion (from its TypeMeta, else from its Go type in the resource
//     table), name, namespace, uid and resourceVersion; source.component
//     and reportingComponent are the component.
//   - Aggregation as Kubernetes' event logger: an occurrence with the same
//     component, object, type, reason and message as an Event written at
//     most AggregationWindow (10 min) after that Event's last occurrence
//     is not written anew: the existing Event's count and lastTimestamp
//     are PATCHed (merge patch). If that Event is gone (404), a new one is
//     created with count 1.
//   - Spam filter as Kubernetes': a token bucket per involved object, burst
//     SpamBurst (25), refilled one token per SpamRefill (5 min). An
//     occurrence without a token is dropped before aggregation and counted
//     (RateLimited).
//   - Transport errors, 5xx, 429 and 409 Conflict are retried (3 attempts,
//     back-off from 200 ms); any other rejection is logged and the event
//     dropped. A failed write leaves no aggregate behind, so the next
//     occurrence is created anew.
//   - The aggregation cache and the buckets are owned by the sender
//     goroutine and bounded (4096 aggregates; buckets are swept of full
//     ones as they grow). Run returns nil when ctx ends, without writing
//     what is still queued.
package record
