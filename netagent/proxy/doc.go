// Package proxy is Skiff's service proxy core: it turns Services and
// EndpointSlices (from the client informers) into a State snapshot and hands
// it to a mode backend (iptables, nftables, ipvs) that programs the kernel.
// It also runs what every mode shares: the healthCheckNodePort servers, the
// proxy's /healthz, the kube-proxy metrics and the UDP conntrack clean-up.
//
// # Flow
//
// Informer handlers only record which Services changed (an EndpointSlice
// names its Service with the kubernetes.io/service-name label) and wake the
// runner. The runner coalesces wake-ups: it syncs at most once per
// MinSyncPeriod (default 100 ms), and does a full sync every SyncPeriod
// (default 30 s). A sync reads the informer caches for the changed Services
// only, patches the State, and calls Backend.Sync with the ServicePortNames
// whose ServicePort or endpoints really changed (nil for a full sync).
//
// # Invariants
//
//   - No sync before both the Service and the EndpointSlice caches have
//     synced; the first sync is full.
//   - Event handlers only record changes; one goroutine (the runner) builds
//     the State and calls the Backend, so Backend.Sync is never concurrent.
//   - A failed sync forces the next one to be full, retried after a back-off
//     (MinSyncPeriod doubling up to SyncPeriod).
//   - State entries are replaced, never mutated in place: a backend may keep
//     the *ServicePort and []Endpoint values of a previous State to diff
//     against.
//   - State.Endpoints holds every endpoint of a Service port with its
//     conditions; which ones carry traffic is decided by CategorizeEndpoints
//     (kube-proxy's rules), which every backend must use.
//   - Every backend passes proxytest.Conformance on its fake kernel (the
//     same packets against the same Services, the same outcomes, except
//     where the table documents a mode's difference and why) and, where
//     the kernel has the mode, proxytest.KernelCases in network
//     namespaces.
//   - Only TCP and UDP ports are proxied; SCTP ports are logged and skipped.
//     Headless and ExternalName Services have no rules.
//   - Conntrack entries are deleted only after the backend has programmed
//     the change, and only for UDP.
//
// # Metrics and health
//
// Metrics carry kube-proxy's names (subsystem "kubeproxy"):
// sync_proxy_rules_duration_seconds (and its full/partial variants),
// sync_proxy_rules_last_timestamp_seconds,
// sync_proxy_rules_last_queued_timestamp_seconds,
// network_programming_duration_seconds (from an EndpointSlice's
// endpoints.kubernetes.io/last-change-trigger-time to the end of the sync
// that programmed it; trigger times from before the proxy started are not
// measured; a pod's lastTransitionTime has second precision, so, as in
// Kubernetes, it over-counts by up to 1 s: test/proxylatency measures the
// real latency) and sync_proxy_rules_failures_total. Proxier.Healthz answers
// 200 while the last successful sync is younger than HealthTimeout (2 ×
// SyncPeriod), 503 before the first sync and after. A Service with
// externalTrafficPolicy Local and a healthCheckNodePort gets an HTTP server
// on that port on each node address, answering as kube-proxy does: 200 with
// {"service":{"namespace","name"},"localEndpoints":N,...} when N > 0 (and
// the proxy is healthy), else 503.
//
// # Endpoint selection (kube-proxy's rules, see CategorizeEndpoints)
//
//   - Cluster traffic (ClusterIP, and external traffic with
//     externalTrafficPolicy Cluster) uses the ready endpoints; if none is
//     ready anywhere, the endpoints that are serving and terminating.
//   - internalTrafficPolicy Local: ClusterIP traffic uses only this node's
//     endpoints (ready, else serving+terminating); none means drop.
//   - externalTrafficPolicy Local: NodePort, LoadBalancer and externalIP
//     traffic from outside the node uses only this node's endpoints and is
//     not masqueraded (the client IP is kept); traffic from this node or its
//     pods to those addresses is handled as Cluster traffic.
package proxy
