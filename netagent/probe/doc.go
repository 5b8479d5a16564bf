// Package probe runs the readiness, liveness and startup probes of a
// pod's containers, as the kubelet's prober does.
//
// # Checks (Prober.Probe)
//
//   - httpGet: a GET to scheme://host:port/path, host = probe.host or the
//     pod IP, port a number or a container port name. 200-399 is success;
//     redirects are not followed (a 3xx counts as success). HTTPS skips
//     certificate verification, as the kubelet does. httpHeaders are sent
//     (a Host header sets the request's host). The body is not read past
//     10 KiB. Each check is one request on a connection of its own
//     (Connection: close) written and read with net/http's Request.Write
//     and ReadResponse, without an http.Transport (whose per-connection
//     goroutines and buffers cost twice the allocations); like the
//     kubelet's, no proxy and no compression.
//   - tcpSocket: success when a TCP connection to host:port opens.
//   - exec: the command runs in the container through an Execer (the
//     runtime); exit code 0 is success, anything else (or a timeout) a
//     failure.
//   - grpc is not supported: such a probe always fails, saying so.
//   - Every check is bounded by timeoutSeconds. httpGet and tcpSocket dial
//     through Prober.Dial, which the agent points into the node's network
//     namespace (a pod IP is only reachable from there).
//
// # Thresholds (Worker)
//
//   - The first check runs initialDelaySeconds after the container
//     started (at once for a container started longer ago, such as one
//     adopted after an agent restart), then every periodSeconds.
//   - Worker.Trigger runs a check at once, between the periodic ones (not
//     before initialDelaySeconds): the kubelet does so for a started
//     container's readiness probe that has not succeeded yet, whenever it
//     computes the pod's status (prober_manager.go, UpdatePodStatus), and
//     the agent likewise at each sync of such a pod. Its checks count like
//     the periodic ones.
//   - The reported result starts as Failure for readiness (not ready until
//     proven), Success for liveness and Unknown for startup. It flips to
//     Success after successThreshold consecutive successes and to Failure
//     after failureThreshold consecutive failures; each flip is reported
//     once, in order, from the worker's goroutine.
//   - Skiff's one departure from the kubelet: until a readiness check of
//     the worker has succeeded, a failed one is retried sooner than the
//     period: every 100 ms for the first ten failures (the first
//     second), then 200, 400, 800 ms... (the periodic schedule still
//     runs; the period caps the wait). A container that
//     is not listening yet at its first check, a moment after it
//     started, would else stay unready a whole period when no sync of
//     its pod triggers a check in between. Liveness and startup never
//     retry sooner (their failures lead to restarts), nor does readiness
//     once a check succeeded (successThreshold counts checks a period
//     apart).
//   - Defaults as Kubernetes: periodSeconds 10, timeoutSeconds 1,
//     successThreshold 1, failureThreshold 3, initialDelaySeconds 0.
//   - A startup worker stops probing after its first reported success
//     (Kubernetes never probes startup again for that container).
//   - Start returns at once and calls its done function when ctx has ended
//     and no check is running (nothing is reported after that); Run is
//     Start and wait.
//   - A worker holds no goroutine between checks: each check runs on a
//     timer's goroutine (time.AfterFunc) that ends with it, one check of a
//     worker at a time. A goroutine per worker kept the 16-32 KiB stack an
//     httpGet check grows; with 100 probed pods the agent's RSS was about
//     0.6 MB higher (BenchmarkPodsReady100).
package probe
