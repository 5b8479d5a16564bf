package printers

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Table is a meta.k8s.io/v1 Table, the body of a list or get answered for
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
type Table struct {
	Kind              string       `json:"kind"`
	APIVersion        string       `json:"apiVersion"`
	Metadata          api.ListMeta `json:"metadata"`
	ColumnDefinitions []Column     `json:"columnDefinitions"`
	Rows              []Row        `json:"rows"`
}

// Column is a meta.k8s.io/v1 TableColumnDefinition.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Header is the column's heading as kubectl prints it: "Cluster-IP" is
// "CLUSTER-IP", "Last Seen" is "LAST SEEN".
func (c Column) Header() string { return strings.ToUpper(c.Name) }

// Row is a meta.k8s.io/v1 TableRow. Cells are strings, int64s or bools.
type Row struct {
	Cells      []any          `json:"cells"`
	Conditions []RowCondition `json:"conditions,omitempty"`
	// Object is the row's object, as the request's includeObject asked:
	// a PartialObjectMetadata (the default), the whole object, or nothing.
	Object json.RawMessage `json:"object,omitempty"`
}

// RowCondition is a meta.k8s.io/v1 TableRowCondition. The only type is
// Completed, set on pods that succeeded or failed.
type RowCondition struct {
	Type    string              `json:"type"`
	Status  api.ConditionStatus `json:"status"`
	Reason  string              `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
}

// Printer prints the objects of one resource.
type Printer struct {
	// Columns are the resource's column definitions, in order.
	Columns []Column
	row     func(obj api.Object, now time.Time) Row
}

// Row computes obj's row at time now (ages are relative to now). An object
// of another type than the printer's gets the NAME and AGE of its metadata
// padded to the printer's columns.
func (p *Printer) Row(obj api.Object, now time.Time) Row {
	return p.row(obj, now)
}

// The column descriptions Kubernetes takes from ObjectMeta's field docs.
const (
	descName       = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	descAge        = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	descContainers = "Names of each container in the template."
	descImages     = "Images referenced by each container in the template."
)

var (
	nameColumn = Column{Name: "Name", Type: "string", Format: "name", Description: descName}
	ageColumn  = Column{Name: "Age", Type: "string", Description: descAge}
)

func col(name, desc string) Column { return Column{Name: name, Type: "string", Description: desc} }

func wide(c Column) Column {
	c.Priority = 1
	return c
}

// typed adapts a row function of one Go type to a Printer's.
func typed[T any, PT interface {
	*T
	api.Object
}](columns []Column, cells func(PT, time.Time) []any, conds func(PT) []RowCondition) *Printer {
	p := &Printer{Columns: columns}
	p.row = func(obj api.Object, now time.Time) Row {
		o, ok := obj.(PT)
		if !ok {
			return Row{Cells: fallbackCells(obj, now, columns)}
		}
		r := Row{Cells: cells(o, now)}
		if conds != nil {
			r.Conditions = conds(o)
		}
		return r
	}
	return p
}

// fallbackCells fills the name and age columns of an object of an
// unexpected type and leaves the others empty.
func fallbackCells(obj api.Object, now time.Time, columns []Column) []any {
	m := obj.GetObjectMeta()
	cells := make([]any, len(columns))
	for i, c := range columns {
		switch {
		case c.Format == "name":
			cells[i] = m.Name
		case c.Name == "Age":
			cells[i] = Age(m.CreationTimestamp.Time, now)
		default:
			cells[i] = ""
		}
	}
	return cells
}

// Default prints NAME and AGE, for resources without their own printer.
func Default() *Printer {
	p := &Printer{Columns: []Column{nameColumn, ageColumn}}
	p.row = func(obj api.Object, now time.Time) Row {
		m := obj.GetObjectMeta()
		return Row{Cells: []any{m.Name, Age(m.CreationTimestamp.Time, now)}}
	}
	return p
}

// FromTable is the printer of a resource's own Table (its
// ResourceInfo.Table).
func FromTable(t *api.TablePrinter) *Printer {
	p := &Printer{}
	for _, c := range t.Columns {
		p.Columns = append(p.Columns, Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
	}
	p.row = func(obj api.Object, now time.Time) Row {
		return Row{Cells: t.Cells(obj, now)}
	}
	return p
}

// For returns the printer of a resource, by API group ("" for core) and
// plural resource name; Default() for a resource without one.
func For(group, resource string) *Printer {
	switch group + "/" + resource {
	case "/pods":
		return typed(podColumns(), PodCells, podConditions)
	case "/services":
		return typed(serviceColumns(), ServiceCells, nil)
	case "/nodes":
		return typed(nodeColumns(), NodeCells, nil)
	case "/namespaces":
		return typed(namespaceColumns(), NamespaceCells, nil)
	case "/events":
		return typed(eventColumns(), EventCells, nil)
	case "/configmaps":
		return typed(configMapColumns(), ConfigMapCells, nil)
	case "/secrets":
		return typed(secretColumns(), SecretCells, nil)
	case "/serviceaccounts":
		return typed(serviceAccountColumns(), ServiceAccountCells, nil)
	case "/endpoints":
		return typed(endpointsColumns(), EndpointsCells, nil)
	case "apps/deployments":
		return typed(deploymentColumns(), DeploymentCells, nil)
	case "apps/statefulsets":
		return typed(statefulSetColumns(), StatefulSetCells, nil)
	case "apps/replicasets":
		return typed(replicaSetColumns(), ReplicaSetCells, nil)
	case "/replicationcontrollers":
		return typed(replicationControllerColumns(), ReplicationControllerCells, nil)
	case "apps/daemonsets":
		return typed(daemonSetColumns(), DaemonSetCells, nil)
	case "policy/poddisruptionbudgets":
		return typed(podDisruptionBudgetColumns(), PodDisruptionBudgetCells, nil)
	case "discovery.k8s.io/endpointslices":
		return typed(endpointSliceColumns(), EndpointSliceCells, nil)
	case "coordination.k8s.io/leases":
		return typed(leaseColumns(), LeaseCells, nil)
	case "networking.k8s.io/servicecidrs":
		return typed(serviceCIDRColumns(), ServiceCIDRCells, nil)
	case "networking.k8s.io/ipaddresses":
		return typed(ipAddressColumns(), IPAddressCells, nil)
	case "autoscaling/horizontalpodautoscalers":
		return typed(hpaColumns(), HorizontalPodAutoscalerCells, nil)
	case "batch/jobs":
		return typed(jobColumns(), JobCells, nil)
	case "batch/cronjobs":
		return typed(cronJobColumns(), CronJobCells, nil)
	// storage (rows_storage.go)
	case "/persistentvolumes":
		return typed(persistentVolumeColumns(), PersistentVolumeCells, nil)
	case "/persistentvolumeclaims":
		return typed(persistentVolumeClaimColumns(), PersistentVolumeClaimCells, nil)
	case "storage.k8s.io/storageclasses":
		return typed(storageClassColumns(), StorageClassCells, nil)
	case "scheduling.k8s.io/priorityclasses": // rows_scheduling.go
		return typed(priorityClassColumns(), PriorityClassCells, nil)
	case "apps/controllerrevisions": // rows_revision.go
		return typed(controllerRevisionColumns(), ControllerRevisionCells, nil)
	// networking.k8s.io (rows_networking.go)
	case "networking.k8s.io/ingresses":
		return typed(ingressColumns(), IngressCells, nil)
	case "networking.k8s.io/ingressclasses":
		return typed(ingressClassColumns(), IngressClassCells, nil)
	case "networking.k8s.io/networkpolicies":
		return typed(networkPolicyColumns(), NetworkPolicyCells, nil)
	}
	return Default()
}
