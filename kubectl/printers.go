package kubectl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// The client-side printers give the columns kubectl shows when the server
// answers a plain list instead of a Table (and for watch events that are
// not Tables). They follow Kubernetes' pkg/printers/internalversion; a
// resource without a printer gets NAME and AGE.

func col(name string) TableColumn     { return TableColumn{Name: name, Type: "string"} }
func wideCol(name string) TableColumn { return TableColumn{Name: name, Type: "string", Priority: 1} }
func nameCol() TableColumn            { return TableColumn{Name: "NAME", Type: "string", Format: "name"} }

// clientPrinter makes one row for an object.
type clientPrinter struct {
	columns []TableColumn
	row     func(raw []byte, now time.Time) ([]string, error)
}

var clientPrinters = map[string]clientPrinter{
	"pods": {
		columns: []TableColumn{nameCol(), col("READY"), col("STATUS"), col("RESTARTS"), col("AGE"),
			wideCol("IP"), wideCol("NODE"), wideCol("NOMINATED NODE"), wideCol("READINESS GATES")},
		row: typed(podRow),
	},
	"services": {
		columns: []TableColumn{nameCol(), col("TYPE"), col("CLUSTER-IP"), col("EXTERNAL-IP"), col("PORT(S)"), col("AGE"),
			wideCol("SELECTOR")},
		row: typed(serviceRow),
	},
	"deployments": {
		columns: []TableColumn{nameCol(), col("READY"), col("UP-TO-DATE"), col("AVAILABLE"), col("AGE"),
			wideCol("CONTAINERS"), wideCol("IMAGES"), wideCol("SELECTOR")},
		row: typed(deploymentRow),
	},
	"statefulsets": {
		columns: []TableColumn{nameCol(), col("READY"), col("AGE"), wideCol("CONTAINERS"), wideCol("IMAGES")},
		row:     typed(statefulSetRow),
	},
	"endpointslices": {
		columns: []TableColumn{nameCol(), col("ADDRESSTYPE"), col("PORTS"), col("ENDPOINTS"), col("AGE")},
		row:     typed(endpointSliceRow),
	},
	"nodes": {
		columns: []TableColumn{nameCol(), col("STATUS"), col("ROLES"), col("AGE"), col("VERSION"),
			wideCol("INTERNAL-IP"), wideCol("EXTERNAL-IP"), wideCol("OS-IMAGE"), wideCol("KERNEL-VERSION"), wideCol("CONTAINER-RUNTIME")},
		row: typed(nodeRow),
	},
	"namespaces": {
		columns: []TableColumn{nameCol(), col("STATUS"), col("AGE")},
		row:     typed(namespaceRow),
	},
	"events": {
		columns: []TableColumn{col("LAST SEEN"), col("TYPE"), col("REASON"), col("OBJECT"), col("MESSAGE")},
		row:     typed(eventRow),
	},
	"ipaddresses": {
		columns: []TableColumn{nameCol(), col("PARENTREF")},
		row:     typed(ipAddressRow),
	},
	"servicecidrs": {
		columns: []TableColumn{nameCol(), col("CIDRS"), col("AGE")},
		row:     typed(serviceCIDRRow),
	},
	"leases": {
		columns: []TableColumn{nameCol(), col("HOLDER"), col("AGE")},
		row:     typed(leaseRow),
	},
}

// typed adapts a printer of a typed object.
func typed[T any](f func(*T, time.Time) []string) func([]byte, time.Time) ([]string, error) {
	return func(raw []byte, now time.Time) ([]string, error) {
		var obj T
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		return f(&obj, now), nil
	}
}

// printerFor is the client-side printer of a resource.
func printerFor(info *api.ResourceInfo) clientPrinter {
	if p, ok := clientPrinters[info.Resource]; ok && info != endpointsInfo {
		return p
	}
	if info == endpointsInfo {
		return clientPrinter{columns: []TableColumn{nameCol(), col("ENDPOINTS"), col("AGE")}, row: typed(endpointsRow)}
	}
	return clientPrinter{
		columns: []TableColumn{nameCol(), col("AGE")},
		row: func(raw []byte, now time.Time) ([]string, error) {
			var obj struct {
				Metadata api.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, err
			}
			return []string{obj.Metadata.Name, age(obj.Metadata.CreationTimestamp.Time, now)}, nil
		},
	}
}

// clientRows prints objects with the client-side printer of info.
func clientRows(info *api.ResourceInfo, items []json.RawMessage, now time.Time) (rowSet, error) {
	p := printerFor(info)
	rs := rowSet{columns: p.columns}
	for _, raw := range items {
		cells, err := p.row(raw, now)
		if err != nil {
			return rowSet{}, fmt.Errorf("decode %s: %w", info.Kind, err)
		}
		var obj struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &obj)
		m, _ := decodeMap(raw)
		rs.rows = append(rs.rows, printRow{cells: cells, meta: obj.Metadata, object: m})
	}
	return rs, nil
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// podStatusReason is the STATUS column of a pod (kubectl's printPod).
func podStatusReason(p *api.Pod) string {
	reason := p.Status.Phase
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	initializing := false
	for i, c := range p.Status.InitContainerStatuses {
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case c.State.Terminated != nil:
			if c.State.Terminated.Reason == "" {
				if c.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Init:Signal:%d", c.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
				}
			} else {
				reason = "Init:" + c.State.Terminated.Reason
			}
			initializing = true
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
			initializing = true
		}
		break
	}
	if !initializing {
		hasRunning := false
		for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := p.Status.ContainerStatuses[i]
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil && c.State.Terminated.Reason != "":
				reason = c.State.Terminated.Reason
			case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
			case c.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
			case c.Ready && c.State.Running != nil:
				hasRunning = true
			}
		}
		if reason == "Completed" && hasRunning {
			if api.IsPodReady(p) {
				reason = api.PodRunning
			} else {
				reason = "NotReady"
			}
		}
	}
	if p.DeletionTimestamp != nil {
		if p.Status.Reason == "NodeLost" {
			reason = "Unknown"
		} else {
			reason = "Terminating"
		}
	}
	if reason == "" {
		reason = api.PodPending
	}
	return reason
}

func podRow(p *api.Pod, now time.Time) []string {
	ready, restarts := 0, int32(0)
	var lastRestart time.Time
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
		restarts += c.RestartCount
		if t := c.LastState.Terminated; t != nil && t.FinishedAt.After(lastRestart) {
			lastRestart = t.FinishedAt.Time
		}
	}
	restartText := strconv.Itoa(int(restarts))
	if restarts > 0 && !lastRestart.IsZero() {
		restartText = fmt.Sprintf("%d (%s ago)", restarts, humanDuration(now.Sub(lastRestart)))
	}
	return []string{
		p.Name,
		fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)),
		podStatusReason(p),
		restartText,
		age(p.CreationTimestamp.Time, now),
		noneIfEmpty(p.Status.PodIP),
		noneIfEmpty(p.Spec.NodeName),
		noneIfEmpty(p.Status.NominatedNodeName),
		"<none>",
	}
}

// serviceExternalIP is the EXTERNAL-IP column of a Service.
func serviceExternalIP(s *api.Service) string {
	switch s.Spec.Type {
	case api.ServiceTypeClusterIP, api.ServiceTypeNodePort, "":
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case api.ServiceTypeLoadBalancer:
		var ips []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ips = append(ips, in.IP)
			} else if in.Hostname != "" {
				ips = append(ips, in.Hostname)
			}
		}
		ips = append(ips, s.Spec.ExternalIPs...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case api.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts is the PORT(S) column: 80/TCP, 80:30080/TCP.
func servicePorts(ports []api.ServicePort) string {
	if len(ports) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = "TCP"
		}
		if p.NodePort != 0 {
			parts = append(parts, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto))
		} else {
			parts = append(parts, fmt.Sprintf("%d/%s", p.Port, proto))
		}
	}
	return strings.Join(parts, ",")
}

func serviceRow(s *api.Service, now time.Time) []string {
	clusterIP := s.Spec.ClusterIP
	if clusterIP == "" {
		clusterIP = "<none>"
	}
	selector := "<none>"
	if len(s.Spec.Selector) > 0 {
		selector = joinMap(s.Spec.Selector, "=", ",")
	}
	typ := s.Spec.Type
	if typ == "" {
		typ = api.ServiceTypeClusterIP
	}
	return []string{s.Name, typ, clusterIP, serviceExternalIP(s), servicePorts(s.Spec.Ports),
		age(s.CreationTimestamp.Time, now), selector}
}

func containersAndImages(spec *api.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func deploymentRow(d *api.Deployment, now time.Time) []string {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	names, images := containersAndImages(&d.Spec.Template.Spec)
	return []string{d.Name,
		fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired),
		strconv.Itoa(int(d.Status.UpdatedReplicas)),
		strconv.Itoa(int(d.Status.AvailableReplicas)),
		age(d.CreationTimestamp.Time, now),
		names, images, noneIfEmpty(api.SelectorString(d.Spec.Selector)),
	}
}

func statefulSetRow(s *api.StatefulSet, now time.Time) []string {
	desired := int32(1)
	if s.Spec.Replicas != nil {
		desired = *s.Spec.Replicas
	}
	names, images := containersAndImages(&s.Spec.Template.Spec)
	return []string{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired),
		age(s.CreationTimestamp.Time, now), names, images}
}

// listWithMore is kubectl's formatListWithMore.
func listWithMore(list []string, more bool, count, limit int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-limit)
	}
	return ret
}

func endpointSliceRow(s *api.EndpointSlice, now time.Time) []string {
	const limit = 3
	var ports []string
	more := false
	for _, p := range s.Ports {
		if len(ports) < limit {
			switch {
			case p.Port != nil:
				ports = append(ports, strconv.Itoa(int(*p.Port)))
			case p.Name != nil:
				ports = append(ports, *p.Name)
			default:
				ports = append(ports, "*")
			}
		} else {
			more = true
		}
	}
	portText := listWithMore(ports, more, len(s.Ports), limit)
	endpoints := "<unset>"
	if len(s.Endpoints) > 0 {
		var addrs []string
		count := 0
		more = false
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				if len(addrs) < limit {
					addrs = append(addrs, a)
				} else {
					more = true
				}
				count++
			}
		}
		endpoints = listWithMore(addrs, more, count, limit)
	}
	return []string{s.Name, s.AddressType, portText, endpoints, age(s.CreationTimestamp.Time, now)}
}

func nodeRow(n *api.Node, now time.Time) []string {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			switch c.Status {
			case "True":
				status = "Ready"
			default:
				status = "NotReady"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k := range n.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	slices.Sort(roles)
	rolesText := "<none>"
	if len(roles) > 0 {
		rolesText = strings.Join(roles, ",")
	}
	addr := func(t string) string {
		for _, a := range n.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	info := n.Status.NodeInfo
	return []string{n.Name, status, rolesText, age(n.CreationTimestamp.Time, now), info.KubeletVersion,
		addr(api.NodeInternalIP), addr(api.NodeExternalIP), unknown(info.OSImage), unknown(info.KernelVersion),
		unknown(info.ContainerRuntimeVersion)}
}

func namespaceRow(n *api.Namespace, now time.Time) []string {
	phase := n.Status.Phase
	if phase == "" {
		phase = api.NamespaceActive
	}
	return []string{n.Name, phase, age(n.CreationTimestamp.Time, now)}
}

// eventTime is when an event last happened.
func eventTime(e *api.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func eventRow(e *api.Event, now time.Time) []string {
	obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
	return []string{age(eventTime(e), now), e.Type, e.Reason, obj, strings.TrimSpace(e.Message)}
}

func ipAddressRow(a *api.IPAddress, _ time.Time) []string {
	ref := "<none>"
	if p := a.Spec.ParentRef; p != nil {
		ref = p.Resource
		if p.Group != "" {
			ref += "." + p.Group
		}
		ref += "/" + p.Namespace + "/" + p.Name
	}
	return []string{a.Name, ref}
}

func serviceCIDRRow(c *api.ServiceCIDR, now time.Time) []string {
	return []string{c.Name, strings.Join(c.Spec.CIDRs, ","), age(c.CreationTimestamp.Time, now)}
}

func leaseRow(l *api.Lease, now time.Time) []string {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []string{l.Name, holder, age(l.CreationTimestamp.Time, now)}
}
