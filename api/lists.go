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
