// Package client is Skiff's Go client for its Kubernetes-shaped REST API.
//
// One Client serves every resource: calls are addressed by an
// *api.ResourceInfo (group, version, plural resource, scope) plus a namespace
// and a name, so adding a resource to api.Resources() needs no client code.
// Objects are any api.Object (typed structs, Unstructured) and lists are the
// typed XxxList structs or RawList.
//
// # Transport
//
//   - HTTPS with the cluster CA from Config.CAPEM (or the system roots) and a
//     bearer token; Config comes from New's caller or FromKubeconfig, which
//     reads the standard kubeconfig YAML written by the server.
//   - Every call takes ctx first and is cancelled by it. The default
//     http.Client has no overall timeout because watches are long-lived
//     streams; bound calls with ctx deadlines.
//
// # Errors
//
//   - A response outside 2xx always becomes a *APIError holding the server's
//     Status (a body that is not a Status is turned into one from the HTTP
//     code), so IsNotFound, IsConflict, IsGone and the other helpers work on
//     every failed call, including wrapped ones (errors.As).
//   - Transport failures are returned wrapped with the "client:" prefix and
//     are never APIErrors.
//
// # Paths
//
//   - Core resources live under /api/v1, grouped ones under
//     /apis/{group}/{version}; namespaced objects under
//     .../namespaces/{ns}/{resource}/{name}[/{subresource}], and a list or
//     watch with an empty namespace spans all namespaces.
//   - Every segment is path-escaped; names that cannot be a path segment
//     ("", ".", "..", or containing "/" or "%") are rejected before any
//     request is sent. A namespace given for a cluster-scoped resource is an
//     error, never silently dropped.
//
// # Watch
//
//   - A Watcher delivers the decoded events of one chunked, newline-delimited
//     JSON stream in order on ResultChan, which is closed exactly once: when
//     the stream ends, the stream fails to decode, ctx ends, or Stop is
//     called. Err tells which. An ERROR event (for example 410 Gone after
//     compaction) is delivered as an event; Event.Err turns it into an
//     *APIError so IsGone(ev.Err()) drives a relist.
//   - NewWatcher builds a Watcher from any event producer, so in-process
//     clients and test fakes hand out the same type with the same closing
//     rules.
package client
