// Package metricsapi is the server's resource metrics pipeline, what
// metrics-server is upstream: it scrapes every Ready node's GET
// /metrics/resource (the agent's node API, as the kubelet's) in the
// background and serves metrics.k8s.io/v1beta1 (NodeMetrics, cluster
// scoped, and PodMetrics, namespaced; get and list with labelSelector),
// which `kubectl top` and the HorizontalPodAutoscaler read.
//
// # Scraping
//
// Scraper scrapes all Ready nodes at once (Source) every Resolution (15 s,
// metrics-server's --metric-resolution), each with a timeout of at most
// 10 s, parses the Prometheus text (Parse) into one Batch and adds it to
// the Store. A node whose scrape fails contributes nothing to that batch,
// so its node and pods drop out until it answers again (as
// metrics-server).
//
// # Rates (Store)
//
// The Store keeps, per node and per container, the last point and the
// previous one (the last two scrapes), as metrics-server's storage: a new
// point later than the last one moves the last to previous; a point not
// later than the last keeps the previous (if it is older than the new
// point). CPU usage is Δcpu/Δt between the two points' own timestamps
// (the agent stamps each sample with the time it was read), in
// nanocores; window is Δt; timestamp is the last point's; memory is the
// last working set. Rules for the pairs:
//
//   - A container whose start time changed (it restarted) has its
//     previous point dropped: its counter started again, so a rate across
//     the restart would be wrong. It needs one more scrape.
//   - A counter that went back (cpu lower than the previous point's, with
//     the same start time: on the process runtime, processes of the tree
//     exited with their time) is a reset: the pair is dropped too (metrics-
//     server refuses such a pair as "unexpected decrease").
//   - A pod is listed only when every container it reported has a pair;
//     a node only when it has one. So a pod or node without two scrapes
//     yet is absent from the list, and a get of it is NotFound.
//
// # Serving
//
// API answers as metrics-server: metadata (name, namespace, labels of the
// pod or node, creationTimestamp the time of the request), timestamp,
// window ("15.002s"), usage / containers[].usage with cpu as a canonical
// decimal quantity of nanocores ("12345n", "250m", "2") and memory as a
// binary quantity of bytes ("37276Ki"). A list's labelSelector (and
// fieldSelector on metadata.name and metadata.namespace) selects the pods
// or nodes first (from the store), then those with metrics are returned. Authorization is the server's: get and list of pods and
// nodes in the group metrics.k8s.io, which the server's authorizer grants
// to whoever may read pods and nodes (admins, the read-only token, a
// ServiceAccount in its own namespace); nodes may not.
package metricsapi
