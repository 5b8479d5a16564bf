// Package persistentvolume is Skiff's PersistentVolume binder and its
// built-in local-path provisioner: it binds PersistentVolumeClaims to
// PersistentVolumes as upstream's pv_controller (persistentvolume-binder)
// does, and provisions hostPath volumes on the node a claim's first pod
// was scheduled to, as k3s's local-path-provisioner does.
//
// # Flow
//
//	claims, volumes informers ─┐
//	classes (add, update) ─────┼─► queue of "claim:ns/name" and "volume:name"
//	pods (scheduled) ──────────┘       (and every key again each ResyncPeriod, 15 s)
//	sync(key): State from the caches → PlanClaim / PlanVolume (pure) → apply(Plan)
//
// # Claims (PlanClaim, upstream's syncClaim)
//
//   - A claim with no class (no spec.storageClassName, no
//     volume.beta.kubernetes.io/storage-class annotation) that is not
//     bound gets the default StorageClass, as upstream's retroactive
//     default-class assignment; the API server's admission does the same
//     at create (server/storage.go). Of several defaults the newest wins.
//   - Unbound claim of a WaitForFirstConsumer class without the
//     volume.kubernetes.io/selected-node annotation: Pending
//     (WaitForFirstConsumer event) until a pod that uses it is scheduled
//     (spec.nodeName set, not ended, not being deleted); then the binder
//     writes that node into the annotation. Upstream's scheduler writes it
//     in its PreBind step, before binding the pod; here the pod is bound
//     first and the node agent waits for the claim (the scheduler's filter,
//     scheduler/volumes.go, admits such a claim on any node when its class
//     has a provisioner).
//   - Matching (upstream's FindMatchingVolume and checkVolumeSatisfyClaim):
//     a volume pre-bound to the claim (claimRef with its name and no uid or
//     its uid) wins, unless its node affinity excludes the selected node.
//     Otherwise the smallest Available volume with no claimRef whose
//     capacity is at least the request, whose class and volume mode equal
//     the claim's, which has every access mode of the claim, whose labels
//     match the claim's selector and, for a delayed claim, whose node
//     affinity admits the selected node. Volumes being deleted are skipped.
//   - Binding writes, in order: the volume's claimRef (with the claim's
//     uid; pv.kubernetes.io/bound-by-controller when the binder chose the
//     volume), the volume's status Bound, the claim's spec.volumeName and
//     annotations (pv.kubernetes.io/bind-completed, bound-by-controller
//     when the binder chose), the claim's status Bound with the volume's
//     access modes and capacity.
//   - No match: a class whose provisioner is skiff.dev/local-path
//     provisions (below) once the node is selected (an Immediate local-path
//     class cannot: "configuration error, no node was specified", as
//     local-path-provisioner); another provisioner gets the
//     ExternalProvisioning event and the claim waits; no class:
//     FailedBinding.
//   - A claim naming a volume: bound when the volume is free and fits
//     (VolumeMismatch event otherwise) or already names the claim; a
//     volume bound elsewhere leaves it Pending (FailedBinding), or Lost
//     when the claim was once bound (bind-completed), as is a bound claim
//     whose volume is gone (ClaimLost event).
//
// # Volumes (PlanVolume, upstream's syncVolume)
//
//   - No claimRef: Available. A claimRef without uid (pre-bound by the
//     user): Available until the claim's sync binds it.
//   - Its claim (same uid) names it: Bound. Its claim is not bound yet:
//     left to the claim's sync.
//   - Its claim is gone or was recreated (another uid): Released, then
//     the reclaim policy: Retain keeps it Released (an administrator
//     clears claimRef to reuse it); Delete deletes a volume this
//     provisioner made (annotation pv.kubernetes.io/provisioned-by:
//     skiff.dev/local-path) and marks any other Failed
//     (VolumeFailedDelete: no deleter plugin exists for it); Recycle is
//     not supported and fails (VolumeFailedRecycle).
//   - Its claim went to another volume: a provisioned Delete volume is
//     reclaimed; one the binder bound (bound-by-controller) is unbound
//     (claimRef cleared, Available); one the user pre-bound is left.
//
// # The local-path provisioner
//
// The server creates the StorageClass local-path at start when absent
// (annotation storageclass.kubernetes.io/is-default-class: "true",
// provisioner skiff.dev/local-path, WaitForFirstConsumer, reclaim Delete);
// `--disable-controller persistentvolume-binder` leaves both out. A
// provisioned volume is named pvc-<claim uid> (as upstream names them),
// is pre-bound to its claim, and is a hostPath volume (type
// DirectoryOrCreate, as local-path-provisioner's default) at
// <storage dir>/<volume name>, where the storage dir is the one the node
// agent publishes on its Node in the annotation skiff.dev/storage-dir
// (<agent data dir>/storage; /var/lib/skiff-agent/storage when absent),
// with a required node affinity kubernetes.io/hostname In [node]. Its
// capacity is the claim's request (not enforced: a hostPath directory has
// no quota, as with local-path-provisioner), its access modes the claim's,
// its reclaim policy and mount options the class's. It carries the
// finalizer skiff.dev/local-path-cleanup: once the binder deletes it, the
// node agent of that node removes the directory and then the finalizer,
// so a volume whose node is down stays Terminating until the agent is
// back (an administrator may remove the finalizer to give up the data).
//
// # Protection (upstream's pvc-protection and pv-protection)
//
// The API server puts kubernetes.io/pvc-protection on new claims and
// kubernetes.io/pv-protection on new volumes while the binder runs
// (server/storage.go). A claim being deleted keeps its finalizer while a
// scheduled pod that has not ended (Succeeded, Failed) uses it, so it
// stays Terminating under a running pod; a volume being deleted keeps its
// finalizer while it is Bound. Unlike upstream, whose controller lists the
// pods live before removing the claim's finalizer, the binder trusts its
// pod cache (a pod created in the instant the claim is deleted may find
// the claim gone; the node agent then waits for it).
//
// # Invariants
//
//   - Plans are pure: PlanClaim and PlanVolume never change their inputs
//     and read only the State given.
//   - No expectations are needed: every update carries the cached
//     resourceVersion, so a write decided on a stale cache fails with 409
//     and the key is synced again from a fresher cache (two claims cannot
//     both take one volume: the second claimRef write conflicts); a
//     provisioned volume's name comes from the claim's uid, so a second
//     create is AlreadyExists, which counts as done.
//   - Writes to an object deleted meanwhile (404) are dropped; its delete
//     event syncs what is left. Other failures are retried with back-off
//     (200 ms up to 30 s, at most 15 times in a row, then at the next
//     change or resync).
package persistentvolume
