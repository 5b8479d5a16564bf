// Package source feeds a *dns.Store from client informers of Services,
// EndpointSlices and Pods: it converts each API object to the Store's slim
// form (dns.Service, dns.EndpointSlice, dns.Pod) and applies every add,
// update and delete the informers report.
//
// # Conversion
//
//   - Service: type (empty means ClusterIP), spec.clusterIPs (falling back
//     to spec.clusterIP; "None" makes it headless; unparsable addresses are
//     dropped), externalName, ports (name, protocol, port), and
//     publishNotReadyAddresses.
//   - EndpointSlice: the owning Service from the label
//     kubernetes.io/service-name (a slice without it is not DNS's and is
//     removed from the Store), endpoints (addresses that parse as IPs,
//     hostname, conditions, nodeName, the targetRef's name when it is a Pod)
//     and ports. Conditions follow the API's rules for unset values: ready
//     unset means ready, serving unset means the same as ready, terminating
//     unset means not terminating.
//   - Pod: namespace, name and status.podIPs (falling back to
//     status.podIP). A pod that holds no address for DNS (no IP yet, being
//     deleted, or finished: Succeeded or Failed, whose IP may already be
//     someone else's) is removed from the Store.
//
// # Invariants
//
//   - The Store reflects the informers' caches: every informer notification
//     is applied in the order the informer delivers it, an update whose new
//     object cannot be converted removes the old one, and a delete removes
//     the object by namespace and name.
//   - Store.SetSynced(true) is called only after all three informers have
//     synced (their first list has been delivered to the Source's handlers),
//     so the DNS answers SERVFAIL, never NXDOMAIN, until the Store is
//     complete. The handlers must therefore be registered (New) before the
//     informers start.
//   - The Source never modifies the informers' objects: conversion only
//     reads them and builds new values.
package source
