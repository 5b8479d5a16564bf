// Package dns is Skiff's embedded cluster DNS: it answers the Kubernetes DNS
// schema (github.com/kubernetes/dns docs/specification.md, version 1.1.0)
// for the cluster domain from an in-memory Store, and forwards every other
// name to upstream resolvers through a small cache. It is built on
// github.com/miekg/dns.
//
// # Parts
//
//   - Store (store.go, view.go): the index the handler reads. The watch-cache
//     wiring converts API objects to the slim Service, EndpointSlice and Pod
//     types (types.go) and calls Upsert, Delete and Replace; it calls
//     SetSynced(true) once every resource has been listed. Per Service the
//     Store keeps an immutable view (its addresses, named ports, endpoint
//     names and SRV targets) rebuilt on every change, plus a reverse index
//     address -> names, a pod index (namespace, IP) and per-namespace counts.
//   - Server (server.go, handler.go, cluster.go): a dns.Handler (ServeDNS) and
//     UDP and TCP listeners (Serve, ListenAndServe).
//   - forwarder (forward.go, cache.go): upstream exchanges, one per distinct
//     question in flight, and an LRU cache of answers.
//
// # Invariants
//
//   - Cluster names are never forwarded; names outside the cluster domain
//     (and reverse names the Store does not know, outside Config.ReverseNets)
//     always are.
//   - Until Store.Synced, every cluster name (and every reverse name in
//     ReverseNets or in the Store) is answered SERVFAIL: a partial cache
//     never produces NXDOMAIN or NODATA.
//   - Every answer goes only to a client in Config.AllowedNets or on
//     loopback; every other client gets REFUSED, for cluster names too, so
//     the server is never an open resolver nor a cluster-name oracle.
//   - A name that exists without records of the asked type is NODATA
//     (NOERROR, empty answer, the apex SOA in authority); a name that does
//     not exist is NXDOMAIN with the SOA. The SOA minimum is the record TTL,
//     so negative answers are cached no longer than positive ones. Empty
//     non-terminals (svc.<domain>, <ns>.svc.<domain> of a namespace with
//     Services, _<proto>.<svc>..., pod.<domain>, <ns>.pod.<domain> of a
//     namespace with pods, dns.<domain>) are NODATA.
//   - A Service name with no address record (a headless Service without
//     ready endpoints, a Service whose ClusterIP is not allocated yet) does
//     not exist: NXDOMAIN, as the specification (2.4.1) says, and so for
//     every name under it.
//   - UDP answers fit the client's size: 512 bytes without EDNS0, the
//     client's EDNS0 size (at least 512, at most 4096) with it. Whatever does
//     not fit is dropped whole: first the additional records, then the
//     authority records of a positive answer (neither sets TC), then answer
//     RRsets from the end, each one whole, setting TC. TCP answers are whole.
//   - Responses echo the question as asked (0x20 case intact); an OPT in the
//     query gets an OPT in the answer (DO echoed); a query with an EDNS
//     version other than 0 gets BADVERS.
//   - Messages that are responses, or shorter than a header, get no answer;
//     opcodes other than QUERY get NOTIMP; anything that does not unpack, or
//     has other than one question, gets FORMERR; classes other than IN get
//     REFUSED (ANY: NOTIMP); zone transfers get REFUSED.
//   - The handler never panics: a panic is logged and answered SERVFAIL.
//
// # Concurrency
//
// The Store has one RWMutex. Writers hold it while they rebuild one
// Service's view; readers hold it only for a map lookup and then use the
// view, which is never modified after it is published (the reverse index
// slices are replaced, never written in place). Records sent in answers are
// built per query from the view: nothing a response references is shared
// with another response, except the apex SOA and NS records, which packing
// does not modify.
//
// # Cost
//
// The per-query path allocates a few objects (the records of the answer, in
// one block per type) and reuses the message, its first records and the
// pack buffer from pools. Answers of up to 512 bytes are sent without name
// compression, whose map is otherwise half the handler's time. The Store
// keeps names relative ("<svc>.<ns>"): a lookup slices the query name and
// builds no string. See README.md for measurements.
package dns
