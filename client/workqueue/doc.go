// Package workqueue is the keyed work queue of Skiff's controllers: a FIFO of
// keys with de-duplication, per-key exponential back-off for retries and
// delayed adds.
//
// # Invariants
//
//   - A key is at most once in the queue, and at most one worker holds it:
//     a key added while a worker processes it is queued again only when the
//     worker calls Done, so one key is never processed concurrently.
//   - Level-triggered: the queue carries keys, never events; a sync reads
//     the current state for its key, so coalescing many adds into one is
//     always correct.
//   - AddRateLimited waits Base·2^(n) (capped at Max) for the n-th
//     consecutive failure of a key; Forget resets the count after a success.
//   - After ShutDown every Add is ignored, pending delayed adds are
//     cancelled and Get returns false, so workers stop at their next Get.
//     The queue starts no goroutine of its own (delays are runtime timers
//     that only add a key), so it cannot leak one.
//
// # Run
//
// Run is the one worker loop every controller uses: Options set the
// workers, the retry limit (after MaxRetries a key is logged and
// forgotten until its next change), the log and a per-failure hook; a sync
// returns nil, RequeueAfter(d) for a later look, ErrHandedOff when another
// goroutine settles the key, or an error to be retried with back-off. Run
// shuts the queue down when ctx ends and returns after the syncs in flight.
package workqueue
