// Package ipalloc allocates Service ClusterIPs from one service CIDR
// (--service-cidr), as Kubernetes' service IP allocator does.
//
// It is pure in-memory bookkeeping: a bitmap of the usable addresses behind
// one lock. It never touches the store. The API server calls it inside the
// store transaction that creates the Service and its IPAddress object, and
// calls Release if that transaction fails; at start-up (and in its repair
// pass) it rebuilds the bitmap from the stored IPAddress objects with
// Restore. The store stays the source of truth.
//
// # Range
//
// The usable range is every address of the masked prefix except the network
// address and, for IPv4, the broadcast address (Kubernetes' rule; the IPv6
// all-ones address is usable). FirstIP, the first usable address, goes to
// the "kubernetes" Service. IPv4 prefixes must be /12 or longer and IPv6
// prefixes /64 or longer; an IPv6 prefix with more than 2^20 host addresses
// is capped to its first 2^20, so the bitmap never exceeds 128 KiB and an
// address past the cap is reported as not in the range.
//
// # Bands (KEP-3070)
//
// The range is split into a lower static band of
// min(max(16, cidrSize/16), 256) addresses (none for prefixes of 16
// addresses or fewer) and an upper dynamic band. AllocateNext picks a random
// free address of the upper band and uses the lower band only when the upper
// band is full, so users who pick addresses by hand from the lower band
// rarely collide with dynamic allocations. Allocate takes any usable
// address, in either band.
//
// # Invariants
//
//   - No address is handed out twice: Allocate and AllocateNext take the
//     write lock, and both fail rather than return an address already taken.
//   - Used()+Free() == Size() at all times.
//   - Errors are the sentinels of errors.go, with Kubernetes' wording,
//     wrapped only to add the range text; test them with errors.Is.
//   - Restore replaces the whole allocated set, so it is idempotent.
//   - No operation allocates memory proportional to the range size except
//     New (the bitmap) and Snapshot (the result).
package ipalloc
