// Package saadmission is Kubernetes' ServiceAccount admission plugin
// (plugin/pkg/admission/serviceaccount) as a TxnHook of package apiserver,
// installed by package server on pods.
//
// On a pod create (not on updates or subresources, and not for a mirror
// pod, annotation kubernetes.io/config.mirror), inside the pod's store
// transaction:
//
//   - spec.serviceAccountName is "default" when empty (the defaults
//     already set it; kept for pods written before them);
//   - the ServiceAccount is read in the same transaction. A missing
//     ServiceAccount refuses the pod (403 Forbidden, "error looking up
//     service account ns/name: serviceaccount "name" not found"), as
//     upstream, except "default": Skiff's serviceaccount controller makes
//     it a moment after the namespace, and a pod created in that moment is
//     admitted as if it existed (upstream waits for it instead);
//   - unless the pod's automountServiceAccountToken is false, or it is
//     unset and the ServiceAccount's is false, every init container and
//     container that mounts nothing at /var/run/secrets/kubernetes.io/serviceaccount
//     gets the read-only mount of a projected volume kube-api-access-<5
//     random characters> (an existing volume whose name starts with
//     kube-api-access- is reused): a serviceAccountToken source
//     (expirationSeconds 3607, path token), the configMap kube-root-ca.crt
//     (key ca.crt) and the downwardAPI metadata.namespace (path
//     namespace), defaultMode 0644. The volume is added only when a
//     container mounts it;
//   - a pod without imagePullSecrets gets the ServiceAccount's.
//
// The hook writes nothing else and never refuses a pod otherwise. It
// changes pods only on create, so it is an apiserver.ValidatingHook: pod
// updates are encoded before their transaction.
package saadmission
