package workqueue

import (
	"container/heap"
	"time"
)

// NewPriority returns a queue that hands out keys by priority, highest
// first, then in the order they were added (as kube-scheduler's active
// queue with PrioritySort). prio is called outside the queue's lock each
// time a key is added; a key already waiting keeps its place.
func NewPriority[K comparable](base, max time.Duration, prio func(K) int64) *Queue[K] {
	q := New[K](base, max)
	q.prio = prio
	q.prios = map[K]int64{}
	q.heap = &prioHeap[K]{}
	return q
}

type prioItem[K comparable] struct {
	key  K
	prio int64
	seq  uint64
}

type prioHeap[K comparable] []prioItem[K]

func (h prioHeap[K]) Len() int { return len(h) }
func (h prioHeap[K]) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].seq < h[j].seq
}
func (h prioHeap[K]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *prioHeap[K]) Push(x any)   { *h = append(*h, x.(prioItem[K])) }
func (h *prioHeap[K]) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = prioItem[K]{}
	*h = old[:len(old)-1]
	return it
}

// priorityOf computes key's priority (before taking the lock).
func (q *Queue[K]) priorityOf(key K) (int64, bool) {
	if q.prio == nil {
		return 0, false
	}
	return q.prio(key), true
}

// push appends key to the waiting keys (caller holds mu).
func (q *Queue[K]) push(key K) {
	if q.heap == nil {
		q.queue = append(q.queue, key)
		return
	}
	q.seq++
	heap.Push(q.heap, prioItem[K]{key: key, prio: q.prios[key], seq: q.seq})
}

// pop removes the next waiting key (caller holds mu; size() > 0).
func (q *Queue[K]) pop() K {
	if q.heap == nil {
		var zero K
		key := q.queue[0]
		q.queue[0] = zero
		q.queue = q.queue[1:]
		return key
	}
	return heap.Pop(q.heap).(prioItem[K]).key
}

// size is the number of waiting keys (caller holds mu).
func (q *Queue[K]) size() int {
	if q.heap == nil {
		return len(q.queue)
	}
	return q.heap.Len()
}
