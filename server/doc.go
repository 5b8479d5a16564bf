// Package server assembles Skiff's control plane for `skiff server`: the
// PKI and tokens, the bbolt store, the ClusterIP/NodePort allocators and
// their repair pass, the API server on HTTPS, the built-in objects, and the
// controllers (garbage collection, namespace deletion, node IPAM, ...), and
// unless --disable-agent a node agent for its own machine.
//
// # Startup order
//
//  1. TLS material, tokens and admin.kubeconfig (apiserver/pki).
//  2. The store (store.OpenBolt), wrapped in store/encrypt: every stored
//     Secret is read once, and with --secrets-encryption the plaintext ones
//     are written again encrypted (encryption.go).
//  3. Repair: the allocators are rebuilt from the store before any request
//     is served, so no IP or port can be handed out twice after a crash.
//  4. The HTTPS listener. /readyz answers 503 until step 5 is done.
//  5. Built-in objects through the API itself (namespaces default,
//     kube-system, kube-public; the default ServiceCIDR; the `kubernetes`
//     Service and its EndpointSlice), then the controllers, which talk to
//     the API over loopback HTTPS like any other client.
//
// # Nodes
//
//   - The join token (tokens/node) authenticates only at POST
//     /skiff/v1/nodes/<name>/token (nodejoin.go), outside the resource API:
//     an agent sends its node password and gets a node token
//     ("node:<name>:<secret>") that authenticates as system:node:<name> in
//     group system:nodes. tokens/nodes/<name> (0600) keeps the SHA-256 of
//     the node's password and of its current token, never the secrets. A
//     name is bound to the first password it joined with (another machine
//     with the join token cannot take it over: 403); every join re-issues
//     the token and the old one stops working. Deleting the file frees the
//     name. Trade-off: re-issuing on every join means the server never
//     stores a token it could hand out again, at the cost of one join per
//     agent start (the agent caches its token and re-joins only on 401).
//   - The authorizer (auth.go, Kubernetes' node authorizer) lets a node
//     get the pods bound to it, list and watch them with the field
//     selector spec.nodeName=<node> (every other pod list or watch of a
//     node returns names, phase and IPs only: what the node DNS reads),
//     get the Secrets, ConfigMaps, ServiceAccounts and
//     PersistentVolumeClaims its pods reference (nodegraph.go: a graph
//     kept from a watch of the pods in the store, not a scan per
//     request), read services, endpointslices, nodes, namespaces,
//     servicecidrs and its own Lease, and write its own Node (and
//     status), its own Lease in kube-node-lease, events, and the status
//     of pods bound to it (the pod is read from the store: spec.nodeName
//     never changes once set), and delete those pods. Anything else is
//     403, and so are /metrics and every non-resource path but discovery
//     and OpenAPI. The NodeRestriction hook checks what needs the object:
//     the name of a created Node or Lease, and that a node never sets or
//     changes its podCIDR.
//   - A node may create ServiceAccount tokens only for the
//     ServiceAccounts of pods bound to it, bound to such a pod
//     (satoken.go, upstream's NodeRestriction).
//
// # ServiceAccount tokens
//
// satoken.go serves the serviceaccounts/token subresource (TokenRequest)
// and authenticates its JWTs (signed by tls/service-account.key through
// apiserver/satoken) as system:serviceaccount:<ns>:<name>, checking on
// every request that the ServiceAccount and the bound Pod or Secret still
// exist with the token's uids; a ServiceAccount may read its own
// namespace but Secrets (auth.go).
//
// # Nodes, continued
//
//   - nodeipam (controller/nodeipam) gives every Node a podCIDR out of
//     --cluster-cidr (/--node-cidr-mask-size, 24 by default).
//   - serviceaccount (controller/serviceaccount) keeps a "default"
//     ServiceAccount in every active namespace. The pods hook
//     (apiserver/saadmission, upstream's ServiceAccount admission) mounts
//     the token volume in a new pod and gives a pod created without
//     imagePullSecrets its ServiceAccount's.
//   - Unless --disable-agent, Start also runs a node agent for this machine
//     (agent.go): it joins over the server's own URL like any agent, with
//     its state in the data dir. A test binary runs it only when
//     Config.AgentNetNS names a namespace the test made; without one it is
//     skipped with a warning, so no test can touch the host's network.
//
// # Logs and traces
//
//   - pods/{name}/log (apiserver.Config.PodLogs) and GET
//     /skiff/v1/namespaces/{ns}/pods/{name}/trace?url= (outside the
//     resource API; admins and the read-only dashboard token only: 403 for
//     nodes and the join token) are answered by the agent of the pod's node
//     (nodeapi.go): the built-in agent in-process, any other over its node
//     API, at the address its latest join came from (kept in
//     tokens/nodes/<name>) on the port of the URL its Node publishes
//     (annotation skiff.dev/node-api; the host there is not dialled),
//     pinning the SHA-256 of the certificate it publishes next to it, and
//     presenting a client certificate (CN skiff-apiserver-node-client,
//     ClientAuth only) that Start issues in memory from the cluster CA.
//   - metrics.k8s.io (metrics.go, server/metricsapi): every Ready node's
//     GET /metrics/resource is scraped the same way every
//     config.Server.MetricResolution (15 s) in the background, and the
//     rates between the last two scrapes are served as NodeMetrics and
//     PodMetrics (apiserver.Config.Reads).
//   - A pod not scheduled is 400; a node missing, never joined, publishing
//     no node API or unreachable, or a certificate that is not the pinned
//     one, is 503 (the last two with a generic message; the detail is
//     logged at Warn).
//   - pods/{name}/exec, attach and portforward (apiserver.Config.PodStream,
//     nodestream.go; create on the subresource: admins only) go the same
//     way as HTTP/1.1 upgrades: the built-in agent serves the request
//     in-process (Agent.ServeNodeAPI hijacks the client's connection); a
//     remote node gets it over the pinned HTTPS, and httputil.ReverseProxy
//     splices the upgraded connections until either side closes, then
//     closes both. Before the upgrade the answers are Statuses (400 not an
//     upgrade or a bad container, 404 pod, 503 node).
//
// # DNS
//
// With --dns-listen the server also answers cluster DNS (package dns) on
// that address over UDP and TCP (dns.go). Its listeners are bound in Start
// (a busy port fails Start); it answers from the controllers' shared
// informers of Services, EndpointSlices and Pods (dns/source), SERVFAIL
// until they have synced, and stops with the controllers.
//
// # Dashboard
//
// The web dashboard (package web, wired in web.go) sits in front of the
// listener's handler: "/", "/favicon.ico" and "/ui/" are its, the rest goes
// on to node join, the trace route and the API. It calls the API handler
// in process with the session's own token, so the authorizer above decides
// its writes (the read-only dashboard token, tokens/dashboard, reads only,
// and not Secrets).
// Its session cookies are sealed with tokens/dashboard-session.key, kept
// across restarts. The first start logs the read-only token once.
//
// # Shutdown
//
// Cancelling Run's context (SIGTERM in cmd/skiff) stops the controllers,
// drains HTTP requests for at most ShutdownTimeout, and closes the store,
// which finishes any commit in flight. Acknowledged writes are durable.
// Connections still busy after ShutdownTimeout are cut and counted in a
// Warn; Stop still returns nil.
//
// # Connections
//
// The HTTPS listener is an accept gate (internal/connlimit: per-address
// and total caps, closing the longest-idle connection to make room), with
// idle and request-read timeouts, and net/http's connection errors at Warn
// through a rate limiter (internal/ratelog); conns.go builds it.
package server
