// Package server assembles Skiff's control plane for `skiff server`: the
// PKI and tokens, the bbolt store, the ClusterIP/NodePort allocators and
// their repair pass, the API server on HTTPS, the built-in objects, and the
// controllers (garbage collection, namespace deletion).
//
// # Startup order
//
//  1. TLS material, tokens and admin.kubeconfig (apiserver/pki).
//  2. The store (store.OpenBolt).
//  3. Repair: the allocators are rebuilt from the store before any request
//     is served, so no IP or port can be handed out twice after a crash.
//  4. The HTTPS listener. /readyz answers 503 until step 5 is done.
//  5. Built-in objects through the API itself (namespaces default,
//     kube-system, kube-public; the default ServiceCIDR; the `kubernetes`
//     Service and its EndpointSlice), then the controllers, which talk to
//     the API over loopback HTTPS like any other client.
//
// # DNS
//
// With --dns-listen the server also answers cluster DNS (package dns) on
// that address over UDP and TCP (dns.go). Its listeners are bound in Start
// (a busy port fails Start); it answers from the controllers' shared
// informers of Services, EndpointSlices and Pods (dns/source), SERVFAIL
// until they have synced, and stops with the controllers.
//
// # Shutdown
//
// Cancelling Run's context (SIGTERM in cmd/skiff) stops the controllers,
// drains HTTP requests for at most ShutdownTimeout, and closes the store,
// which finishes any commit in flight. Acknowledged writes are durable.
package server
