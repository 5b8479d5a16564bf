package api

// ---- PersistentVolume, PersistentVolumeClaim (core/v1) and
// StorageClass (storage.k8s.io/v1) ----
//
// Field names and JSON tags are upstream's. Volume sources Skiff does not
// mount (csi, iscsi, ...) are kept as fields where manifests use them, so
// kubectl's strict field validation accepts them; see docs/api.md.

// Persistent volume access modes.
const (
	ReadWriteOnce    = "ReadWriteOnce"
	ReadOnlyMany     = "ReadOnlyMany"
	ReadWriteMany    = "ReadWriteMany"
	ReadWriteOncePod = "ReadWriteOncePod"
)

// Persistent volume modes.
const (
	PersistentVolumeBlock      = "Block"
	PersistentVolumeFilesystem = "Filesystem"
)

// Reclaim policies of a PersistentVolume (and a StorageClass).
const (
	PersistentVolumeReclaimRecycle = "Recycle"
	PersistentVolumeReclaimDelete  = "Delete"
	PersistentVolumeReclaimRetain  = "Retain"
)

// PersistentVolume phases.
const (
	VolumePending   = "Pending"
	VolumeAvailable = "Available"
	VolumeBound     = "Bound"
	VolumeReleased  = "Released"
	VolumeFailed    = "Failed"
)

// PersistentVolumeClaim phases.
const (
	ClaimPending = "Pending"
	ClaimBound   = "Bound"
	ClaimLost    = "Lost"
)

// Volume binding modes of a StorageClass.
const (
	VolumeBindingImmediate            = "Immediate"
	VolumeBindingWaitForFirstConsumer = "WaitForFirstConsumer"
)

// Well-known storage annotations, as upstream's.
const (
	// AnnIsDefaultStorageClass marks the StorageClass claims without a
	// storageClassName get.
	AnnIsDefaultStorageClass = "storageclass.kubernetes.io/is-default-class"
	// AnnBetaStorageClass is the deprecated annotation form of
	// spec.storageClassName, still honoured by the binder.
	AnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class"
	// AnnSelectedNode names the node the scheduler chose for a pod using
	// a WaitForFirstConsumer claim; the provisioner provisions there.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnStorageProvisioner names the provisioner asked to provision a claim.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnDynamicallyProvisioned names the provisioner that made a PV.
	AnnDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
	// AnnBindCompleted and AnnBoundByController are the binder's marks on
	// a claim and a volume.
	AnnBindCompleted     = "pv.kubernetes.io/bind-completed"
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
)

// ResourceStorage is the resource name of a volume's size.
const ResourceStorage = "storage"

// PersistentVolume is a piece of storage in the cluster (cluster-scoped).
type PersistentVolume struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PersistentVolumeSpec   `json:"spec,omitempty"`
	Status     PersistentVolumeStatus `json:"status,omitempty"`
}

// PersistentVolumeSpec is the desired state of a PersistentVolume.
type PersistentVolumeSpec struct {
	Capacity                      ResourceList `json:"capacity,omitempty"`
	PersistentVolumeSource        `json:",inline"`
	AccessModes                   []string            `json:"accessModes,omitempty"`
	ClaimRef                      *ObjectReference    `json:"claimRef,omitempty"`
	PersistentVolumeReclaimPolicy string              `json:"persistentVolumeReclaimPolicy,omitempty"`
	StorageClassName              string              `json:"storageClassName,omitempty"`
	MountOptions                  []string            `json:"mountOptions,omitempty"`
	VolumeMode                    *string             `json:"volumeMode,omitempty"`
	NodeAffinity                  *VolumeNodeAffinity `json:"nodeAffinity,omitempty"`
	VolumeAttributesClassName     *string             `json:"volumeAttributesClassName,omitempty"`
}

// PersistentVolumeSource is where a PersistentVolume's data lives: exactly
// one field. Skiff's node agent mounts hostPath, local and nfs; the others
// are accepted and stored so that manifests written for other clusters
// load.
type PersistentVolumeSource struct {
	HostPath  *HostPathVolumeSource            `json:"hostPath,omitempty"`
	Local     *LocalVolumeSource               `json:"local,omitempty"`
	NFS       *NFSVolumeSource                 `json:"nfs,omitempty"`
	CSI       *CSIPersistentVolumeSource       `json:"csi,omitempty"`
	ISCSI     *ISCSIPersistentVolumeSource     `json:"iscsi,omitempty"`
	FC        *FCVolumeSource                  `json:"fc,omitempty"`
	RBD       *RBDPersistentVolumeSource       `json:"rbd,omitempty"`
	CephFS    *CephFSPersistentVolumeSource    `json:"cephfs,omitempty"`
	Glusterfs *GlusterfsPersistentVolumeSource `json:"glusterfs,omitempty"`
}

// LocalVolumeSource is a directory or device of one node; the PV must have
// a nodeAffinity naming that node.
type LocalVolumeSource struct {
	Path   string  `json:"path"`
	FSType *string `json:"fsType,omitempty"`
}

// NFSVolumeSource is an NFS export.
type NFSVolumeSource struct {
	Server   string `json:"server"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// SecretReference names a Secret in any namespace.
type SecretReference struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// CSIPersistentVolumeSource is a volume of a CSI driver (stored, not mounted).
type CSIPersistentVolumeSource struct {
	Driver                     string            `json:"driver"`
	VolumeHandle               string            `json:"volumeHandle"`
	ReadOnly                   bool              `json:"readOnly,omitempty"`
	FSType                     string            `json:"fsType,omitempty"`
	VolumeAttributes           map[string]string `json:"volumeAttributes,omitempty"`
	ControllerPublishSecretRef *SecretReference  `json:"controllerPublishSecretRef,omitempty"`
	NodeStageSecretRef         *SecretReference  `json:"nodeStageSecretRef,omitempty"`
	NodePublishSecretRef       *SecretReference  `json:"nodePublishSecretRef,omitempty"`
	ControllerExpandSecretRef  *SecretReference  `json:"controllerExpandSecretRef,omitempty"`
	NodeExpandSecretRef        *SecretReference  `json:"nodeExpandSecretRef,omitempty"`
}

// ISCSIPersistentVolumeSource is an iSCSI disk (stored, not mounted).
type ISCSIPersistentVolumeSource struct {
	TargetPortal      string           `json:"targetPortal"`
	IQN               string           `json:"iqn"`
	Lun               int32            `json:"lun"`
	ISCSIInterface    string           `json:"iscsiInterface,omitempty"`
	FSType            string           `json:"fsType,omitempty"`
	ReadOnly          bool             `json:"readOnly,omitempty"`
	Portals           []string         `json:"portals,omitempty"`
	DiscoveryCHAPAuth bool             `json:"chapAuthDiscovery,omitempty"`
	SessionCHAPAuth   bool             `json:"chapAuthSession,omitempty"`
	SecretRef         *SecretReference `json:"secretRef,omitempty"`
	InitiatorName     *string          `json:"initiatorName,omitempty"`
}

// FCVolumeSource is a Fibre Channel disk (stored, not mounted).
type FCVolumeSource struct {
	TargetWWNs []string `json:"targetWWNs,omitempty"`
	Lun        *int32   `json:"lun,omitempty"`
	FSType     string   `json:"fsType,omitempty"`
	ReadOnly   bool     `json:"readOnly,omitempty"`
	WWIDs      []string `json:"wwids,omitempty"`
}

// RBDPersistentVolumeSource is a Ceph block device (stored, not mounted).
type RBDPersistentVolumeSource struct {
	CephMonitors []string         `json:"monitors"`
	RBDImage     string           `json:"image"`
	FSType       string           `json:"fsType,omitempty"`
	RBDPool      string           `json:"pool,omitempty"`
	RadosUser    string           `json:"user,omitempty"`
	Keyring      string           `json:"keyring,omitempty"`
	SecretRef    *SecretReference `json:"secretRef,omitempty"`
	ReadOnly     bool             `json:"readOnly,omitempty"`
}

// CephFSPersistentVolumeSource is a CephFS mount (stored, not mounted).
type CephFSPersistentVolumeSource struct {
	Monitors   []string         `json:"monitors"`
	Path       string           `json:"path,omitempty"`
	User       string           `json:"user,omitempty"`
	SecretFile string           `json:"secretFile,omitempty"`
	SecretRef  *SecretReference `json:"secretRef,omitempty"`
	ReadOnly   bool             `json:"readOnly,omitempty"`
}

// GlusterfsPersistentVolumeSource is a Glusterfs mount (stored, not mounted).
type GlusterfsPersistentVolumeSource struct {
	EndpointsName      string  `json:"endpoints"`
	Path               string  `json:"path"`
	ReadOnly           bool    `json:"readOnly,omitempty"`
	EndpointsNamespace *string `json:"endpointsNamespace,omitempty"`
}

// VolumeNodeAffinity limits the nodes a volume can be used from.
type VolumeNodeAffinity struct {
	Required *NodeSelector `json:"required,omitempty"`
}

// PersistentVolumeStatus is the observed state of a PersistentVolume.
type PersistentVolumeStatus struct {
	Phase                   string `json:"phase,omitempty"`
	Message                 string `json:"message,omitempty"`
	Reason                  string `json:"reason,omitempty"`
	LastPhaseTransitionTime *Time  `json:"lastPhaseTransitionTime,omitempty"`
}

// PersistentVolumeClaim is a request for storage (namespaced).
type PersistentVolumeClaim struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PersistentVolumeClaimSpec   `json:"spec,omitempty"`
	Status     PersistentVolumeClaimStatus `json:"status,omitempty"`
}

// PersistentVolumeClaimSpec is what a claim asks for.
type PersistentVolumeClaimSpec struct {
	AccessModes               []string                   `json:"accessModes,omitempty"`
	Selector                  *LabelSelector             `json:"selector,omitempty"`
	Resources                 VolumeResourceRequirements `json:"resources,omitempty"`
	VolumeName                string                     `json:"volumeName,omitempty"`
	StorageClassName          *string                    `json:"storageClassName,omitempty"`
	VolumeMode                *string                    `json:"volumeMode,omitempty"`
	DataSource                *TypedLocalObjectReference `json:"dataSource,omitempty"`
	DataSourceRef             *TypedObjectReference      `json:"dataSourceRef,omitempty"`
	VolumeAttributesClassName *string                    `json:"volumeAttributesClassName,omitempty"`
}

// VolumeResourceRequirements are a claim's storage requests and limits.
type VolumeResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// TypedLocalObjectReference names an object in the same namespace.
type TypedLocalObjectReference struct {
	APIGroup *string `json:"apiGroup"`
	Kind     string  `json:"kind"`
	Name     string  `json:"name"`
}

// TypedObjectReference names an object, maybe in another namespace.
type TypedObjectReference struct {
	APIGroup  *string `json:"apiGroup"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Namespace *string `json:"namespace,omitempty"`
}

// PersistentVolumeClaimStatus is the observed state of a claim.
type PersistentVolumeClaimStatus struct {
	Phase       string                           `json:"phase,omitempty"`
	AccessModes []string                         `json:"accessModes,omitempty"`
	Capacity    ResourceList                     `json:"capacity,omitempty"`
	Conditions  []PersistentVolumeClaimCondition `json:"conditions,omitempty"`
}

// PersistentVolumeClaimCondition is one claim condition (Resizing, ...).
type PersistentVolumeClaimCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastProbeTime      Time            `json:"lastProbeTime,omitempty"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// PersistentVolumeClaimVolumeSource is a pod volume backed by a claim in
// the pod's namespace.
type PersistentVolumeClaimVolumeSource struct {
	ClaimName string `json:"claimName"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// StorageClass describes a kind of storage and who provisions it
// (storage.k8s.io/v1, cluster-scoped).
type StorageClass struct {
	TypeMeta             `json:",inline"`
	ObjectMeta           `json:"metadata,omitempty"`
	Provisioner          string                 `json:"provisioner"`
	Parameters           map[string]string      `json:"parameters,omitempty"`
	ReclaimPolicy        *string                `json:"reclaimPolicy,omitempty"`
	MountOptions         []string               `json:"mountOptions,omitempty"`
	AllowVolumeExpansion *bool                  `json:"allowVolumeExpansion,omitempty"`
	VolumeBindingMode    *string                `json:"volumeBindingMode,omitempty"`
	AllowedTopologies    []TopologySelectorTerm `json:"allowedTopologies,omitempty"`
}

// TopologySelectorTerm is one term of a StorageClass's allowedTopologies.
type TopologySelectorTerm struct {
	MatchLabelExpressions []TopologySelectorLabelRequirement `json:"matchLabelExpressions,omitempty"`
}

// TopologySelectorLabelRequirement is a label key and its allowed values.
type TopologySelectorLabelRequirement struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// ---- StatefulSet claims (apps/v1) ----

// StatefulSet claim retention policy types.
const (
	RetainPersistentVolumeClaimRetentionPolicyType = "Retain"
	DeletePersistentVolumeClaimRetentionPolicyType = "Delete"
)

// StatefulSetPersistentVolumeClaimRetentionPolicy says what happens to a
// StatefulSet's claims when it is deleted or scaled down.
type StatefulSetPersistentVolumeClaimRetentionPolicy struct {
	WhenDeleted string `json:"whenDeleted,omitempty"`
	WhenScaled  string `json:"whenScaled,omitempty"`
}
