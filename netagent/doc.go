// Package netagent is Skiff's node agent (the kubelet's job): it joins the
// cluster, registers its Node, heartbeats, and runs the pods the scheduler
// binds to it, one worker per pod, with their network (netagent/cni),
// containers (netagent/runtime), probes (netagent/probe), DNS files and
// status; it serves the node DNS. `skiff agent` runs it on a machine of its
// own; `skiff server` runs one for its own machine unless --disable-agent.
//
// # Identity
//
//   - The agent holds the cluster's join token and a node password of its
//     own (random, <data-dir>/agent/node-password, 0600). It exchanges them
//     at POST /skiff/v1/nodes/<name>/token for a node token that
//     authenticates as system:node:<name> (group system:nodes); see Join.
//     The server binds a name to the first password it joined with, and
//     re-issues the token on every join (the previous one stops working).
//   - The node token is cached (<data-dir>/agent/node-token, 0600) and used
//     until the server answers 401, then the agent joins again. So an agent
//     that restarts while the server is down keeps its pods and catches up.
//   - The server's authorizer lets a node read pods, services,
//     endpointslices, nodes, namespaces and servicecidrs, and write only its
//     own Node, its own Lease, events, and the status (and the final
//     deletion) of pods bound to it.
//
// # Node
//
//   - Registration creates the Node (labels kubernetes.io/hostname,
//     kubernetes.io/os and /arch, and the kubelet's deprecated
//     beta.kubernetes.io/os and /arch; addresses InternalIP and Hostname;
//     capacity and allocatable cpu, memory, pods=MaxPods; nodeInfo) or
//     adopts an existing one, adding any of those labels it lacks.
//   - The agent waits for spec.podCIDR (the server's nodeipam controller),
//     reads the service CIDR from the ServiceCIDR "kubernetes", builds the
//     pod network (bridge skiff0, gateway = first IP of the podCIDR, the
//     service CIDR routed onto it) inside Deps.NodeNetNS, and serves the
//     node DNS on <gateway>:53 there, from its own informers (answers keep
//     coming while the server is away).
//   - Pod routes (Config.PodRoutes, podroutes.go): the agent watches the
//     Nodes and keeps, in the node namespace, a route to every other
//     node's podCIDR: via its InternalIP (host-gw, the default) or through
//     the skiff.vxlan tunnel (vxlan); see netagent/podroutes. Mode none
//     keeps none (an agent under test without a node namespace sets it).
//   - Egress (Config.NoEgressMasquerade, proxyrun.go): RunProxy programs
//     package egress's masquerade of pod traffic leaving the cluster in
//     the proxy mode's packet filter, at start and every minute.
//   - Heartbeats: the Lease kube-node-lease/<name> is renewed every 10s
//     (duration 40s, owned by the Node); the Ready condition is posted on
//     every change and every minute. A restarting agent leaves an existing
//     Ready condition alone until it has decided (ready, or still not ready
//     after a minute), so a restart never flips a healthy node, and with it
//     its pods, to not ready.
//
// # Pods
//
//   - Only pods with spec.nodeName=<node> are watched (field selector).
//     Each pod UID gets one worker goroutine (started by the pod manager's
//     run, pods.go); a pod recreated under the same name is another pod.
//     Workers are woken by pod changes, probe results, container state
//     changes (a relist of the runtime every second, as the kubelet's
//     PLEG) and timers, and re-check their pod at least every
//     ResyncPeriod. Each sync runs on a goroutine of its own that the
//     worker waits for, so the long-lived worker goroutine keeps a small
//     stack (syncOnOwnStack); a pod's syncs stay serial.
//   - A sync observes, plans, then applies (worker.go): it reads each
//     container's instance from the runtime and its probe results; the
//     pure computePodActions (podactions.go, the kubelet's shape) turns
//     the pod, what the worker holds and what it observed into a plan
//     (kill the pod? create the sandbox? per container: start, restart,
//     kill for a failed probe, back off, look again, with reasons; the
//     pod's final phase); the worker applies it (containers.go, probes.go;
//     termination.go for a pod being deleted) and reports the status it
//     builds (podstatus.go). Whatever would block the loop (a probe
//     kill's stop) runs on a goroutine the manager's WaitGroup tracks;
//     back-offs, waits and retries are the loop's timer, never sleeps.
//   - Sandbox: PodNetwork.AddPod gives the pod a netns and an IP; then
//     <data-dir>/pods/<uid>/resolv.conf (ClusterFirst: nameserver = the
//     gateway, search <ns>.svc.<d> svc.<d> <d>, options ndots:5; Default:
//     the node's; None: dnsConfig only; dnsConfig merged) and hosts (the
//     pod's IP with its hostname, preceded by its FQDN when it has a
//     subdomain, and hostAliases) are written; the containers see them as
//     /etc/resolv.conf and /etc/hosts.
//   - Containers start in spec order with their env resolved (envFrom,
//     literals, $(VAR) expansion, fieldRef such as metadata.name,
//     metadata.namespace, status.podIP, resourceFieldRef, configMapKeyRef,
//     secretKeyRef: env.go) and their volumes mounted (configMap, secret,
//     emptyDir, hostPath: volumes.go; persistentVolumeClaim of a bound
//     hostPath or local volume, the local-path cleanup, nfs refused:
//     claims.go); command and args are expanded too.
//     A ConfigMap or Secret is read by a GET when the container starts (a
//     missing one: CreateContainerConfigError, retried) and, for volumes,
//     every 5s while the pod runs.
//   - Probes: startup first (liveness and readiness wait for it), then
//     readiness and liveness, with every threshold field (netagent/probe);
//     httpGet and tcpSocket dial the pod IP from the node's netns.
//   - Restarts follow restartPolicy (Always, OnFailure, Never); a liveness
//     or startup failure kills the container (SIGTERM, the probe's or the
//     pod's grace, SIGKILL) and restarts it unless the policy is Never. The
//     first restart is immediate, the next ones back off 10s, 20s, 40s ...
//     up to 5m; a container that ran 10 minutes starts over. Restart counts
//     and the previous instance's end (lastState) are reported.
//   - When every container has exited for good the pod is Succeeded (all
//     exit codes 0) or Failed; its network is torn down (the IP is free);
//     the status keeps the IP it had.
//
// # Status
//
//   - The status (phase, podIP(s), hostIP(s), startTime, conditions
//     PodScheduled, Initialized, ContainersReady, Ready with their
//     transition times, containerStatuses with state, lastState, ready,
//     started, restartCount, containerID "<runtime>://<id>") is computed by
//     the worker and written by one status manager through pods/status,
//     only when it differs from what the API holds, retried with back-off
//     until it lands. A server outage delays status writes and stops
//     nothing: workers, probes, restarts go on.
//   - A Ready the node lifecycle controller turned off is turned on again
//     by the next write (the comparison is against the API's view).
//
// # Termination
//
//   - A pod with a deletionTimestamp is terminated once: liveness and
//     startup probes stop (readiness goes on, so the endpoint turns
//     serving+terminating rather than unready); a pod that is Ready keeps
//     running untouched for Config.TerminationDelay (default 2s, at most
//     half its grace; --pod-termination-delay), so that every proxy drops
//     its endpoint before it stops accepting; then every container gets
//     SIGTERM and the rest of deletionGracePeriodSeconds (counted from
//     when the agent sees the deletion), then SIGKILL; only then is the
//     network torn down, then the containers and the pod's directory are
//     removed; the final status is written; and the pod is deleted with
//     gracePeriodSeconds=0 and a UID precondition (once it has left the
//     API, nothing of it is left on the node). The termination delay and
//     the retries of the steps after the stop are the worker loop's timer,
//     not waits inside a sync (the network teardown is tried up to five
//     times, the final status and the DELETE with back-off until they
//     land); an agent shutdown leaves what is left to the next agent (the
//     containers' stop itself, once begun, completes).
//   - A pod removed from the API without the agent (a force deletion) is
//     stopped the same way with at least 2s of grace, without API writes.
//   - Stopping the agent stops no pod.
//
// # Restart safety
//
//   - On start, after the node's pods are listed, the runtime's containers
//     of those pods are adopted (the newest instance per container; restart
//     counts, readiness and started come from the API's status when the
//     container ID matches), and AddPod returns a live pod's existing
//     network: no restart of a healthy pod, no IP change, no Ready flap.
//   - Containers, networks and pod dirs of pods that no longer exist are
//     removed (containers get 5s of grace).
//
// # Node API and trace
//
//   - With Config.NodeAPIListen the agent serves the node API (nodeapi.go):
//     container logs and `skiff trace`, over HTTPS with a self-signed
//     certificate whose SHA-256 it publishes on its Node, to the server
//     only (a client certificate of the cluster CA with CN
//     NodeAPIClientName). Agent.ContainerLogs and Agent.Trace are the same
//     calls in-process (the built-in agent of `skiff server`).
//   - GET /metrics/resource (resourcemetrics.go) is the kubelet's resource
//     metrics endpoint: the CPU time and working set of every running
//     container of the node's pods and of the node, read when asked (the
//     runtime's ContainerStats: /proc process trees on the process runtime,
//     cgroup metrics on containerd; the node's root cgroup; netagent/stats),
//     in the Prometheus text format with each sample's read time. The
//     server scrapes it for metrics.k8s.io (server/metricsapi).
//   - A trace (trace.go, pure parts in netagent/trace) reads the pod's
//     resolv.conf as written, queries the node DNS from the node's netns,
//     reads the proxy rules back from the kernel through proxy.RuleTracer
//     (the backend RunProxy hands over in ProxyParams.OnBackend) and lists
//     conntrack in the node's netns; all on demand, nothing in a loop.
//   - Port-forward (portforward.go, wire protocols in client/portforward):
//     /portforward/{ns}/{pod} dials localhost:PORT inside the pod's netns
//     (the path the worker publishes under its mutex while the pod has a
//     network), the socket made on a locked thread after setns, as the
//     CRI runtimes do; every goroutine and socket of a forward ends with
//     its upgraded connection.
//
// # Metrics and proxy healthz
//
//   - The agent's metrics go to Config.Registerer, or to a registry of its
//     own (Go and process collectors): the proxy's kube-proxy metrics
//     (ProxyParams.Registerer). A collector registered twice on the same
//     registry (a restarted agent) replaces the first.
//   - With Config.MetricsListen the agent serves that registry at
//     /metrics (plain HTTP, in its own netns; metrics.go); with
//     Config.HealthzListen, and a proxy, the proxy's Healthz handler
//     (handed over in ProxyParams.OnHealthz) at /healthz and /livez, 503
//     while no proxy runs. Agent.MetricsAddr and HealthzAddr are the bound
//     addresses.
//
// # Limits
//
//   - Init containers, volumes, lifecycle hooks, resource limits and
//     hostNetwork are not implemented (a hostNetwork pod gets a netns of
//     its own and a warning event). grpc probes always fail, saying so.
//   - Runtimes (SelectRuntime): auto picks containerd when a containerd
//     answers (its socket, or an agent-managed one in the data dir), else
//     process; --runtime containerd starts containerd itself when none
//     answers and the binary is on PATH. With a runtime that has images
//     (ImagePuller), each start is preceded by a pull per imagePullPolicy
//     (Kubernetes' default when unset: Always for :latest or no tag), with
//     the kubelet's events and waiting reasons, and the credentials of the
//     pod's imagePullSecrets (package keyring; read with the node's own
//     credentials at each pull; each matching one tried in order, none:
//     anonymous). The process runtime has no images and ignores them.
//   - The service proxy is a hook (Deps.Proxy): it gets the agent's shared
//     informers (its Service and EndpointSlice ones in ProxyParams) and
//     the node's netns.
//
// # Informers
//
//   - The agent's features (pod workers, node DNS, pod routes, proxy,
//     trace) share one client.SharedInformers. Every informer they read
//     is registered in one place (registerInformers, informers.go) before
//     the one Start, and handed to them: none registers its own, so none
//     depends on another having registered the same informer first (an
//     informer first asked for after Start would never run).
package netagent
