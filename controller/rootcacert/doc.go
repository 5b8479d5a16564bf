// Package rootcacert is Kubernetes' root CA certificate publisher
// (pkg/controller/certificates/rootcacertpublisher): every active
// namespace has a ConfigMap kube-root-ca.crt whose data is exactly
// {"ca.crt": <the cluster CA, PEM>} and whose annotation
// kubernetes.io/description says what it is for. Pods read it through the
// token volume the ServiceAccount admission adds (package
// apiserver/saadmission) to check the API server's certificate.
//
// # Flow
//
//	namespaces informer (add, update)            ─┐
//	kube-root-ca.crt informer (update, delete)   ─┴─► queue of namespace names ─► sync(ns)
//	sync(ns): missing → create; data or annotation differ → update; else nothing
//
// # Invariants
//
//   - A namespace that is absent from the cache, being deleted or not
//     Active gets nothing (its create would be refused anyway); a create
//     refused with 404 or 403 (the namespace went away or is terminating)
//     is done, 409 (a stale cache) too.
//   - A user's change to the ConfigMap's data is put back (an update from
//     the cached object, so a concurrent change answers 409 and is
//     retried); other keys and annotations the user added to metadata are
//     kept, other data keys are dropped, as upstream.
//   - Failures are retried with back-off (200ms up to 30s, at most 15 in a
//     row, then again at the namespace's next change).
package rootcacert
