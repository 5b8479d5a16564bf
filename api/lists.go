package api

import "fmt"

// GetListMeta gives access to a list's ListMeta.
func (m *ListMeta) GetListMeta() *ListMeta { return m }

// ListObject is any XxxList: typed access to its metadata and items, so
// generic code (the client's informer, the API server) handles every
// resource the same way.
type ListObject interface {
	GetTypeMeta() *TypeMeta
	GetListMeta() *ListMeta
	// GetItems returns pointers into the list's items.
	GetItems() []Object
	// SetItems replaces the items; each must be a pointer to the list's
	// item type.
	SetItems(items []Object) error
}

func itemsOf[T any, PT interface {
	*T
	Object
}](items []T) []Object {
	out := make([]Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}

func setItemsOf[T any, PT interface {
	*T
	Object
}](dst *[]T, objs []Object) error {
	items := make([]T, len(objs))
	for i, o := range objs {
		p, ok := o.(PT)
		if !ok {
			var zero T
			return fmt.Errorf("api: list item %d is %T, want *%T", i, o, zero)
		}
		items[i] = *p
	}
	*dst = items
	return nil
}

// NamespaceList is a list of Namespaces.
type NamespaceList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Namespace `json:"items"`
}

// GetItems implements ListObject.
func (l *NamespaceList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *NamespaceList) SetItems(items []Object) error { return setItemsOf[Namespace](&l.Items, items) }

// NodeList is a list of Nodes.
type NodeList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Node `json:"items"`
}

// GetItems implements ListObject.
func (l *NodeList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *NodeList) SetItems(items []Object) error { return setItemsOf[Node](&l.Items, items) }

// PodList is a list of Pods.
type PodList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Pod `json:"items"`
}

// GetItems implements ListObject.
func (l *PodList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *PodList) SetItems(items []Object) error { return setItemsOf[Pod](&l.Items, items) }

// ServiceList is a list of Services.
type ServiceList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Service `json:"items"`
}

// GetItems implements ListObject.
func (l *ServiceList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ServiceList) SetItems(items []Object) error { return setItemsOf[Service](&l.Items, items) }

// EventList is a list of Events.
type EventList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Event `json:"items"`
}

// GetItems implements ListObject.
func (l *EventList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *EventList) SetItems(items []Object) error { return setItemsOf[Event](&l.Items, items) }

// DeploymentList is a list of Deployments.
type DeploymentList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Deployment `json:"items"`
}

// GetItems implements ListObject.
func (l *DeploymentList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *DeploymentList) SetItems(items []Object) error {
	return setItemsOf[Deployment](&l.Items, items)
}

// StatefulSetList is a list of StatefulSets.
type StatefulSetList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []StatefulSet `json:"items"`
}

// GetItems implements ListObject.
func (l *StatefulSetList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *StatefulSetList) SetItems(items []Object) error {
	return setItemsOf[StatefulSet](&l.Items, items)
}

// EndpointSliceList is a list of EndpointSlices.
type EndpointSliceList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []EndpointSlice `json:"items"`
}

// GetItems implements ListObject.
func (l *EndpointSliceList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *EndpointSliceList) SetItems(items []Object) error {
	return setItemsOf[EndpointSlice](&l.Items, items)
}

// ServiceCIDRList is a list of ServiceCIDRs.
type ServiceCIDRList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ServiceCIDR `json:"items"`
}

// GetItems implements ListObject.
func (l *ServiceCIDRList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ServiceCIDRList) SetItems(items []Object) error {
	return setItemsOf[ServiceCIDR](&l.Items, items)
}

// IPAddressList is a list of IPAddresss.
type IPAddressList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []IPAddress `json:"items"`
}

// GetItems implements ListObject.
func (l *IPAddressList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *IPAddressList) SetItems(items []Object) error { return setItemsOf[IPAddress](&l.Items, items) }

// LeaseList is a list of Leases.
type LeaseList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Lease `json:"items"`
}

// GetItems implements ListObject.
func (l *LeaseList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *LeaseList) SetItems(items []Object) error { return setItemsOf[Lease](&l.Items, items) }

// ConfigMapList is a list of ConfigMaps.
type ConfigMapList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ConfigMap `json:"items"`
}

// GetItems implements ListObject.
func (l *ConfigMapList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ConfigMapList) SetItems(items []Object) error { return setItemsOf[ConfigMap](&l.Items, items) }

// SecretList is a list of Secrets.
type SecretList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Secret `json:"items"`
}

// GetItems implements ListObject.
func (l *SecretList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *SecretList) SetItems(items []Object) error { return setItemsOf[Secret](&l.Items, items) }

// ServiceAccountList is a list of ServiceAccounts.
type ServiceAccountList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ServiceAccount `json:"items"`
}

// GetItems implements ListObject.
func (l *ServiceAccountList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ServiceAccountList) SetItems(items []Object) error {
	return setItemsOf[ServiceAccount](&l.Items, items)
}

// EndpointsList is a list of Endpoints.
type EndpointsList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Endpoints `json:"items"`
}

// GetItems implements ListObject.
func (l *EndpointsList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *EndpointsList) SetItems(items []Object) error { return setItemsOf[Endpoints](&l.Items, items) }

// HorizontalPodAutoscalerList is a list of HorizontalPodAutoscalers.
type HorizontalPodAutoscalerList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []HorizontalPodAutoscaler `json:"items"`
}

// GetItems implements ListObject.
func (l *HorizontalPodAutoscalerList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *HorizontalPodAutoscalerList) SetItems(items []Object) error {
	return setItemsOf[HorizontalPodAutoscaler](&l.Items, items)
}

// ReplicaSetList is a list of ReplicaSets.
type ReplicaSetList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ReplicaSet `json:"items"`
}

// GetItems implements ListObject.
func (l *ReplicaSetList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ReplicaSetList) SetItems(items []Object) error {
	return setItemsOf[ReplicaSet](&l.Items, items)
}

// ReplicationControllerList is a list of ReplicationControllers.
type ReplicationControllerList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ReplicationController `json:"items"`
}

// GetItems implements ListObject.
func (l *ReplicationControllerList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ReplicationControllerList) SetItems(items []Object) error {
	return setItemsOf[ReplicationController](&l.Items, items)
}

// JobList is a list of Jobs.
type JobList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Job `json:"items"`
}

// GetItems implements ListObject.
func (l *JobList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *JobList) SetItems(items []Object) error { return setItemsOf[Job](&l.Items, items) }

// CronJobList is a list of CronJobs.
type CronJobList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []CronJob `json:"items"`
}

// GetItems implements ListObject.
func (l *CronJobList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *CronJobList) SetItems(items []Object) error { return setItemsOf[CronJob](&l.Items, items) }

// ---- storage kinds (api/types_storage.go) ----

// PersistentVolumeList is a list of PersistentVolumes.
type PersistentVolumeList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []PersistentVolume `json:"items"`
}

// GetItems implements ListObject.
func (l *PersistentVolumeList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *PersistentVolumeList) SetItems(items []Object) error {
	return setItemsOf[PersistentVolume](&l.Items, items)
}

// PersistentVolumeClaimList is a list of PersistentVolumeClaims.
type PersistentVolumeClaimList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []PersistentVolumeClaim `json:"items"`
}

// GetItems implements ListObject.
func (l *PersistentVolumeClaimList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *PersistentVolumeClaimList) SetItems(items []Object) error {
	return setItemsOf[PersistentVolumeClaim](&l.Items, items)
}

// StorageClassList is a list of StorageClasses.
type StorageClassList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []StorageClass `json:"items"`
}

// GetItems implements ListObject.
func (l *StorageClassList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *StorageClassList) SetItems(items []Object) error {
	return setItemsOf[StorageClass](&l.Items, items)
}

// PriorityClassList is a list of PriorityClasses.
type PriorityClassList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []PriorityClass `json:"items"`
}

// GetItems implements ListObject.
func (l *PriorityClassList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *PriorityClassList) SetItems(items []Object) error {
	return setItemsOf[PriorityClass](&l.Items, items)
}

// DaemonSetList is a list of DaemonSets.
type DaemonSetList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []DaemonSet `json:"items"`
}

// GetItems implements ListObject.
func (l *DaemonSetList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *DaemonSetList) SetItems(items []Object) error {
	return setItemsOf[DaemonSet](&l.Items, items)
}

// PodDisruptionBudgetList is a list of PodDisruptionBudgets.
type PodDisruptionBudgetList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []PodDisruptionBudget `json:"items"`
}

// GetItems implements ListObject.
func (l *PodDisruptionBudgetList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *PodDisruptionBudgetList) SetItems(items []Object) error {
	return setItemsOf[PodDisruptionBudget](&l.Items, items)
}

// ControllerRevisionList is a list of ControllerRevisions.
type ControllerRevisionList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []ControllerRevision `json:"items"`
}

// GetItems implements ListObject.
func (l *ControllerRevisionList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *ControllerRevisionList) SetItems(items []Object) error {
	return setItemsOf[ControllerRevision](&l.Items, items)
}

// IngressList is a list of Ingresses.
type IngressList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []Ingress `json:"items"`
}

// GetItems implements ListObject.
func (l *IngressList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *IngressList) SetItems(items []Object) error {
	return setItemsOf[Ingress](&l.Items, items)
}

// IngressClassList is a list of IngressClasses.
type IngressClassList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []IngressClass `json:"items"`
}

// GetItems implements ListObject.
func (l *IngressClassList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *IngressClassList) SetItems(items []Object) error {
	return setItemsOf[IngressClass](&l.Items, items)
}

// NetworkPolicyList is a list of NetworkPolicies.
type NetworkPolicyList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []NetworkPolicy `json:"items"`
}

// GetItems implements ListObject.
func (l *NetworkPolicyList) GetItems() []Object { return itemsOf(l.Items) }

// SetItems implements ListObject.
func (l *NetworkPolicyList) SetItems(items []Object) error {
	return setItemsOf[NetworkPolicy](&l.Items, items)
}
