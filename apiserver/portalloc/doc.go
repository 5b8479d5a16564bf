// Package portalloc allocates Service NodePorts from one port range
// (--node-port-range, default 30000-32767), as Kubernetes' port allocator
// does.
//
// It is pure in-memory bookkeeping: a bitmap of the range behind one lock.
// It never touches the store. The API server calls it inside the store
// transaction that creates or updates the Service, calls Release if that
// transaction fails, and rebuilds it from the stored Services with Restore
// at start-up and in its repair pass. The store stays the source of truth.
//
// # Bands (KEP-3668)
//
// The range is split into a lower static band of min(max(16, size/32), 128)
// ports (none for ranges of 16 ports or fewer; 86 for the default range)
// and an upper dynamic band. AllocateNext picks a random free port of the
// upper band and uses the lower band only when the upper band is full, so
// users who pick node ports by hand from the bottom of the range rarely
// collide with dynamic allocations. Allocate takes any port of the range.
//
// # Invariants
//
//   - No port is handed out twice: Allocate and AllocateNext take the write
//     lock, and both fail rather than return a port already taken.
//   - Used()+Free() == Size() at all times.
//   - Errors are the sentinels of errors.go, with Kubernetes' wording,
//     wrapped only to add the range text; test them with errors.Is.
//   - Restore replaces the whole allocated set, so it is idempotent.
//   - Only New (the bitmap) and Snapshot (the result) allocate memory
//     proportional to the range size.
package portalloc
