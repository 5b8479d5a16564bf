package persistentvolume

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"

	"github.com/skiff-dev/skiff/api"
)

// Names of the built-in local-path provisioner.
const (
	// Provisioner is the provisioner name of Skiff's local-path class.
	Provisioner = "skiff.dev/local-path"
	// DefaultClassName is the StorageClass the server creates at start.
	DefaultClassName = "local-path"
	// AnnNodeStorageDir is the Node annotation in which the node agent
	// publishes the directory local-path volumes of that node live in
	// (<agent data dir>/storage).
	AnnNodeStorageDir = "skiff.dev/storage-dir"
	// DefaultNodeStorageDir is the directory used for a node that does not
	// publish one: the agent's default data dir plus /storage.
	DefaultNodeStorageDir = "/var/lib/skiff-agent/storage"
	// CleanupFinalizer holds a provisioned volume until the node agent of
	// its node has removed its directory.
	CleanupFinalizer = "skiff.dev/local-path-cleanup"
	// LabelHostname is the node label the provisioned volume's node
	// affinity names.
	LabelHostname = "kubernetes.io/hostname"
	// PVCProtectionFinalizer and PVProtectionFinalizer are upstream's
	// storage-object-in-use protection: the API server puts them on new
	// claims and volumes; the binder removes them once a claim being
	// deleted is used by no pod, and a volume being deleted is not Bound.
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// State is what one sync looks at, read from the caches.
type State struct {
	// Volumes are every PersistentVolume.
	Volumes []*api.PersistentVolume
	// Claims are the claims the sync may need, by "namespace/name".
	Claims map[string]*api.PersistentVolumeClaim
	// Classes are every StorageClass, by name.
	Classes map[string]*api.StorageClass
	// Nodes are the Nodes, by name (for a provisioned volume's directory
	// and for matching static volumes to the selected node).
	Nodes map[string]*api.Node
	// Consumers maps a claim ("namespace/name") to the node of a pod that
	// uses it, is scheduled and has not ended; absent when none.
	Consumers map[string]string
	// InUse holds the claims ("namespace/name") a scheduled pod that has
	// not ended uses (the pvc-protection rule).
	InUse map[string]bool
}

// Event is an Event the plan records about an object.
type Event struct {
	Object  api.Object
	Type    string
	Reason  string
	Message string
}

// Plan is the writes one sync makes, applied in this order: create the
// volume, write the volume (spec/metadata, then status), write the claim
// (spec/metadata, then status), delete the volume. Volume and Claim are
// the desired objects (copies); the flags say which parts changed.
type Plan struct {
	Create *api.PersistentVolume

	Volume       *api.PersistentVolume
	VolumeSpec   bool
	VolumeStatus bool
	Claim        *api.PersistentVolumeClaim
	ClaimSpec    bool
	ClaimStatus  bool
	DeleteVolume string
	Events       []Event
}

// Empty reports whether the plan writes nothing (it may still hold events).
func (p *Plan) Empty() bool {
	return p.Create == nil && !p.VolumeSpec && !p.VolumeStatus && !p.ClaimSpec && !p.ClaimStatus && p.DeleteVolume == ""
}

func (p *Plan) event(obj api.Object, typ, reason, format string, args ...any) {
	p.Events = append(p.Events, Event{Object: obj, Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func claimKey(c *api.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

// boundToClaim is upstream's IsVolumeBoundToClaim: the volume's claimRef
// names the claim, with its uid or none.
func boundToClaim(pv *api.PersistentVolume, c *api.PersistentVolumeClaim) bool {
	r := pv.Spec.ClaimRef
	return r != nil && r.Name == c.Name && r.Namespace == c.Namespace && (r.UID == "" || r.UID == c.UID)
}

func className(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// waitsForConsumer reports whether claims of the class bind only once a
// pod using them is scheduled.
func waitsForConsumer(sc *api.StorageClass) bool {
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == api.VolumeBindingWaitForFirstConsumer
}

// PlanClaim is the binder's decision for one claim (upstream's syncClaim).
func PlanClaim(orig *api.PersistentVolumeClaim, st *State) Plan {
	var p Plan
	if orig.DeletionTimestamp != nil {
		// pvc-protection: the finalizer goes once no pod uses the claim.
		if slices.Contains(orig.Finalizers, PVCProtectionFinalizer) && !st.InUse[claimKey(orig)] {
			c := api.DeepCopy(orig)
			c.Finalizers = slices.DeleteFunc(c.Finalizers, func(f string) bool { return f == PVCProtectionFinalizer })
			p.Claim, p.ClaimSpec = c, true
		}
		return p
	}
	c := api.DeepCopy(orig)
	// Retroactive default class: a claim without a class (and without the
	// beta annotation) that is not bound gets the default class, as
	// upstream's PV controller assigns it since 1.28.
	if c.Spec.StorageClassName == nil && c.Spec.VolumeName == "" {
		if _, beta := c.Annotations[api.AnnBetaStorageClass]; !beta {
			if def := api.DefaultStorageClassOf(classList(st.Classes)); def != nil {
				c.Spec.StorageClassName = &def.Name
				p.Claim, p.ClaimSpec = c, true
				return p
			}
		}
	}
	if c.Spec.VolumeName == "" {
		return planUnboundClaim(c, st, p)
	}
	return planBoundClaim(c, st, p)
}

func classList(m map[string]*api.StorageClass) []*api.StorageClass {
	out := make([]*api.StorageClass, 0, len(m))
	for _, sc := range m {
		out = append(out, sc)
	}
	return out
}

func setClaimPending(c *api.PersistentVolumeClaim, p *Plan) {
	if c.Status.Phase != api.ClaimPending {
		c.Status.Phase = api.ClaimPending
		p.Claim, p.ClaimStatus = c, true
	}
}

func planUnboundClaim(c *api.PersistentVolumeClaim, st *State, p Plan) Plan {
	cls := api.ClaimClass(c)
	sc := st.Classes[cls]
	node := c.Annotations[api.AnnSelectedNode]
	delayed := waitsForConsumer(sc)
	if delayed && node == "" {
		if n := st.Consumers[claimKey(c)]; n != "" {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[api.AnnSelectedNode] = n
			p.Claim, p.ClaimSpec = c, true
			return p
		}
		setClaimPending(c, &p)
		p.event(c, api.EventTypeNormal, "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
		return p
	}
	var nodeObj *api.Node
	if delayed {
		nodeObj = st.Nodes[node]
	}
	if pv := findMatchingVolume(c, st.Volumes, delayed, node, nodeObj); pv != nil {
		return bind(c, pv, &p)
	}
	setClaimPending(c, &p)
	switch {
	case cls == "":
		p.event(c, api.EventTypeNormal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	case sc == nil:
		p.event(c, api.EventTypeWarning, "ProvisioningFailed", "storageclass.storage.k8s.io %q not found", cls)
	case sc.Provisioner == Provisioner:
		if node == "" {
			p.event(c, api.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass %q: configuration error, no node was specified", cls)
			break
		}
		pv := provision(c, sc, node, st.Nodes[node])
		if !volumeExists(st.Volumes, pv.Name) {
			p.Create = pv
			p.event(c, api.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", claimKey(c))
		}
	case sc.Provisioner == "kubernetes.io/no-provisioner":
		p.event(c, api.EventTypeNormal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	default:
		p.event(c, api.EventTypeNormal, "ExternalProvisioning",
			"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", sc.Provisioner)
	}
	return p
}

func volumeExists(vols []*api.PersistentVolume, name string) bool {
	for _, v := range vols {
		if v.Name == name {
			return true
		}
	}
	return false
}

// findMatchingVolume is upstream's FindMatchingVolume: a volume pre-bound
// to the claim wins (unless its node affinity excludes the selected
// node); otherwise the smallest Available, unclaimed volume that satisfies
// the claim (and, for a delayed claim, whose node affinity admits the
// selected node). Volumes being deleted are skipped.
func findMatchingVolume(c *api.PersistentVolumeClaim, vols []*api.PersistentVolume, delayed bool, node string, n *api.Node) *api.PersistentVolume {
	var best *api.PersistentVolume
	sorted := append([]*api.PersistentVolume(nil), vols...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, pv := range sorted {
		if pv.DeletionTimestamp != nil {
			continue
		}
		affinityOK := true
		if delayed && node != "" {
			var labels map[string]string
			if n != nil {
				labels = n.Labels
			} else {
				labels = map[string]string{LabelHostname: node}
			}
			affinityOK = api.VolumeNodeAffinityMatches(pv, labels, node)
		}
		if boundToClaim(pv, c) {
			if !affinityOK {
				return nil
			}
			return pv
		}
		if pv.Spec.ClaimRef != nil || pv.Status.Phase != api.VolumeAvailable || !affinityOK {
			continue
		}
		if api.CheckVolumeForClaim(pv, c) != nil {
			continue
		}
		if best == nil || lessCapacity(pv, best) {
			best = pv
		}
	}
	return best
}

func lessCapacity(a, b *api.PersistentVolume) bool {
	qa, err1 := api.ParseQuantity(a.Spec.Capacity[api.ResourceStorage])
	qb, err2 := api.ParseQuantity(b.Spec.Capacity[api.ResourceStorage])
	return err1 == nil && err2 == nil && qa.Cmp(qb) < 0
}

// bind makes both halves of the binding agree (upstream's bind: the
// volume's claimRef and phase Bound, then the claim's volumeName, its
// annotations and status Bound with the volume's modes and capacity).
func bind(c *api.PersistentVolumeClaim, orig *api.PersistentVolume, p *Plan) Plan {
	pv := api.DeepCopy(orig)
	want := &api.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion}
	if r := pv.Spec.ClaimRef; r == nil || r.UID != c.UID || r.Name != c.Name || r.Namespace != c.Namespace {
		if r == nil {
			setAnn(&pv.ObjectMeta, api.AnnBoundByController, "yes")
		}
		pv.Spec.ClaimRef = want
		p.Volume, p.VolumeSpec = pv, true
	}
	if pv.Status.Phase != api.VolumeBound {
		pv.Status.Phase = api.VolumeBound
		p.Volume, p.VolumeStatus = pv, true
	}
	if c.Spec.VolumeName != pv.Name {
		c.Spec.VolumeName = pv.Name
		setAnn(&c.ObjectMeta, api.AnnBoundByController, "yes")
		p.Claim, p.ClaimSpec = c, true
	}
	if c.Annotations[api.AnnBindCompleted] != "yes" {
		setAnn(&c.ObjectMeta, api.AnnBindCompleted, "yes")
		p.Claim, p.ClaimSpec = c, true
	}
	if c.Status.Phase != api.ClaimBound || !slices.Equal(c.Status.AccessModes, pv.Spec.AccessModes) ||
		!maps.Equal(c.Status.Capacity, pv.Spec.Capacity) {
		c.Status.Phase = api.ClaimBound
		c.Status.AccessModes = append([]string(nil), pv.Spec.AccessModes...)
		c.Status.Capacity = api.ResourceList{}
		for k, v := range pv.Spec.Capacity {
			c.Status.Capacity[k] = v
		}
		p.Claim, p.ClaimStatus = c, true
	}
	return *p
}

func setAnn(m *api.ObjectMeta, k, v string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[k] = v
}

// provision builds the local-path volume of claim c on node: a hostPath
// (DirectoryOrCreate) at <node storage dir>/<pv name>, named pvc-<claim
// uid> as upstream names provisioned volumes, pre-bound to the claim,
// with node affinity on the node's hostname label and the class's
// reclaim policy and mount options.
func provision(c *api.PersistentVolumeClaim, sc *api.StorageClass, node string, n *api.Node) *api.PersistentVolume {
	name := "pvc-" + c.UID
	dir := DefaultNodeStorageDir
	hostname := node
	if n != nil {
		if d := n.Annotations[AnnNodeStorageDir]; d != "" {
			dir = d
		}
		if h := n.Labels[LabelHostname]; h != "" {
			hostname = h
		}
	}
	reclaim := api.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil && *sc.ReclaimPolicy != "" {
		reclaim = *sc.ReclaimPolicy
	}
	typ := "DirectoryOrCreate"
	mode := api.PersistentVolumeFilesystem
	if c.Spec.VolumeMode != nil {
		mode = *c.Spec.VolumeMode
	}
	return &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{api.AnnDynamicallyProvisioned: Provisioner},
			Finalizers:  []string{CleanupFinalizer},
		},
		Spec: api.PersistentVolumeSpec{
			Capacity:                      api.ResourceList{api.ResourceStorage: c.Spec.Resources.Requests[api.ResourceStorage]},
			PersistentVolumeSource:        api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: path.Join(dir, name), Type: &typ}},
			AccessModes:                   append([]string(nil), c.Spec.AccessModes...),
			ClaimRef:                      &api.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion},
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              sc.Name,
			MountOptions:                  append([]string(nil), sc.MountOptions...),
			VolumeMode:                    &mode,
			NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
				MatchExpressions: []api.NodeSelectorRequirement{{Key: LabelHostname, Operator: api.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
}

func planBoundClaim(c *api.PersistentVolumeClaim, st *State, p Plan) Plan {
	var pv *api.PersistentVolume
	for _, v := range st.Volumes {
		if v.Name == c.Spec.VolumeName {
			pv = v
			break
		}
	}
	lost := func() Plan {
		if c.Status.Phase != api.ClaimLost {
			c.Status.Phase = api.ClaimLost
			p.Claim, p.ClaimStatus = c, true
			p.event(c, api.EventTypeWarning, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		}
		return p
	}
	switch {
	case pv == nil:
		if c.Annotations[api.AnnBindCompleted] == "yes" {
			return lost()
		}
		setClaimPending(c, &p)
		return p
	case pv.Spec.ClaimRef == nil:
		// The user bound the claim to a volume: bind the volume to it, if
		// it fits.
		if err := api.CheckVolumeForClaim(pv, c); err != nil {
			setClaimPending(c, &p)
			p.event(c, api.EventTypeWarning, "VolumeMismatch", "Cannot bind to requested volume %q: %v", pv.Name, err)
			return p
		}
		return bind(c, pv, &p)
	case boundToClaim(pv, c):
		return bind(c, pv, &p)
	default:
		if c.Annotations[api.AnnBindCompleted] == "yes" {
			return lost()
		}
		setClaimPending(c, &p)
		p.event(c, api.EventTypeWarning, "FailedBinding", "volume %q already bound to a different claim.", pv.Name)
		return p
	}
}

// PlanVolume is the binder's decision for one volume (upstream's
// syncVolume): Available when unclaimed, Bound when its claim names it,
// Released (then reclaimed) when its claim is gone, unbound again when
// the controller bound it to a claim that went to another volume.
func PlanVolume(orig *api.PersistentVolume, st *State) Plan {
	var p Plan
	if orig.DeletionTimestamp != nil {
		// pv-protection: the finalizer goes once the volume is not Bound.
		if slices.Contains(orig.Finalizers, PVProtectionFinalizer) && orig.Status.Phase != api.VolumeBound {
			pv := api.DeepCopy(orig)
			pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == PVProtectionFinalizer })
			p.Volume, p.VolumeSpec = pv, true
		}
		return p
	}
	pv := api.DeepCopy(orig)
	setPhase := func(phase, reason, message string) {
		if pv.Status.Phase != phase || pv.Status.Reason != reason || pv.Status.Message != message {
			pv.Status.Phase, pv.Status.Reason, pv.Status.Message = phase, reason, message
			p.Volume, p.VolumeStatus = pv, true
		}
	}
	r := pv.Spec.ClaimRef
	if r == nil {
		setPhase(api.VolumeAvailable, "", "")
		return p
	}
	claim := st.Claims[r.Namespace+"/"+r.Name]
	if r.UID == "" {
		// Pre-bound by the user; the claim's sync binds it.
		if pv.Status.Phase == api.VolumePending || pv.Status.Phase == "" {
			setPhase(api.VolumeAvailable, "", "")
		}
		return p
	}
	if claim == nil || claim.UID != r.UID {
		return reclaim(pv, &p, setPhase)
	}
	switch claim.Spec.VolumeName {
	case "":
		// The claim's sync binds it.
		return p
	case pv.Name:
		setPhase(api.VolumeBound, "", "")
		return p
	}
	// The claim is bound to another volume.
	if pv.Annotations[api.AnnDynamicallyProvisioned] != "" && pv.Spec.PersistentVolumeReclaimPolicy == api.PersistentVolumeReclaimDelete {
		return reclaim(pv, &p, setPhase)
	}
	if pv.Annotations[api.AnnBoundByController] != "" {
		pv.Spec.ClaimRef = nil
		delete(pv.Annotations, api.AnnBoundByController)
		p.Volume, p.VolumeSpec = pv, true
		setPhase(api.VolumeAvailable, "", "")
	}
	return p
}

// reclaim releases a volume whose claim is gone and applies its reclaim
// policy: Retain keeps it Released; Delete deletes a volume Skiff's
// provisioner made (its node agent removes the directory, then the
// finalizer) and fails any other, as no deleter plugin exists for it;
// Recycle is not supported (upstream deprecated it) and fails.
func reclaim(pv *api.PersistentVolume, p *Plan, setPhase func(phase, reason, message string)) Plan {
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case api.PersistentVolumeReclaimDelete:
		if pv.Annotations[api.AnnDynamicallyProvisioned] == Provisioner {
			setPhase(api.VolumeReleased, "", "")
			p.DeleteVolume = pv.Name
			return *p
		}
		msg := fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name)
		if pv.Status.Phase != api.VolumeFailed {
			p.event(pv, api.EventTypeWarning, "VolumeFailedDelete", "%s", msg)
		}
		setPhase(api.VolumeFailed, "", msg)
	case api.PersistentVolumeReclaimRecycle:
		msg := fmt.Sprintf("no volume plugin matched name: recycler for volume %q", pv.Name)
		if pv.Status.Phase != api.VolumeFailed {
			p.event(pv, api.EventTypeWarning, "VolumeFailedRecycle", "%s", msg)
		}
		setPhase(api.VolumeFailed, "", msg)
	default:
		setPhase(api.VolumeReleased, "", "")
	}
	return *p
}
