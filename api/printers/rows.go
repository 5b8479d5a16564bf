package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- Pods ----

func podColumns() []Column {
	return []Column{
		nameColumn,
		col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
		col("Status", "The aggregate status of the containers in this pod."),
		col("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
		ageColumn,
		wide(col("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.")),
		wide(col("Node", "NodeName indicates in which node this pod is scheduled.")),
		wide(col("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.")),
		wide(col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.")),
	}
}

// nodeUnreachablePodReason is the pod status reason of a pod on a lost node.
const nodeUnreachablePodReason = "NodeLost"

func podConditions(p *api.Pod) []RowCondition {
	switch p.Status.Phase {
	case api.PodSucceeded:
		return []RowCondition{{Type: "Completed", Status: api.ConditionTrue, Reason: api.PodSucceeded, Message: "The pod has completed successfully."}}
	case api.PodFailed:
		return []RowCondition{{Type: "Completed", Status: api.ConditionTrue, Reason: api.PodFailed, Message: "The pod failed."}}
	}
	return nil
}

func isRestartableInit(c *api.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == api.RestartPolicyAlways
}

func podCondTrue(p *api.Pod, typ string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func later(a api.Time, b api.Time) api.Time {
	if a.Before(b.Time) {
		return b
	}
	return a
}

// PodCells is a pod's row: NAME READY STATUS RESTARTS AGE, then (wide) IP
// NODE NOMINATED-NODE READINESS-GATES, computed as kubectl's printPod.
func PodCells(pod *api.Pod, now time.Time) []any {
	restarts, initRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastInitRestart api.Time

	reason := pod.Status.Phase
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == api.PodScheduled && c.Reason == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}

	inits := make(map[string]*api.Container)
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		inits[c.Name] = c
		if isRestartableInit(c) {
			total++
		}
	}

	initializing := false
	for i, cs := range pod.Status.InitContainerStatuses {
		restarts += int(cs.RestartCount)
		if t := cs.LastState.Terminated; t != nil {
			lastRestart = later(lastRestart, t.FinishedAt)
		}
		restartable := isRestartableInit(inits[cs.Name])
		if restartable {
			initRestarts += int(cs.RestartCount)
			if t := cs.LastState.Terminated; t != nil {
				lastInitRestart = later(lastInitRestart, t.FinishedAt)
			}
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case restartable && cs.Started != nil && *cs.Started:
			if cs.Ready {
				ready++
			}
			continue
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
			initializing = true
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || podCondTrue(pod, api.PodInitialized) {
		restarts = initRestarts
		lastRestart = lastInitRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			if t := cs.LastState.Terminated; t != nil {
				lastRestart = later(lastRestart, t.FinishedAt)
			}
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
				reason = cs.State.Terminated.Reason
			case cs.State.Terminated != nil:
				if cs.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Signal:%d", cs.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
				}
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" && hasRunning {
			if podCondTrue(pod, api.PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && !terminal {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, Age(lastRestart.Time, now))
	}

	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	return []any{
		pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsStr, Age(pod.CreationTimestamp.Time, now),
		orNone(podIP), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName),
		"<none>", // Skiff's PodSpec has no readinessGates
	}
}

// ---- Services ----

func serviceColumns() []Column {
	return []Column{
		nameColumn,
		col("Type", "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer."),
		col("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly."),
		col("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."),
		col("Port(s)", "The list of ports that are exposed by this service."),
		ageColumn,
		wide(col("Selector", "Route service traffic to pods with label keys and values matching this selector.")),
	}
}

// ServicePorts is a Service's PORT(S) cell: "80/TCP", "80:30080/TCP",
// comma-joined; "<none>" without ports.
func ServicePorts(ports []api.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return orNone(strings.Join(pieces, ","))
}

// ServiceExternalIP is a Service's EXTERNAL-IP cell: its externalIPs, or a
// LoadBalancer's ingress ("<pending>" until it has one), or an
// ExternalName's name; "<none>" otherwise.
func ServiceExternalIP(svc *api.Service) string {
	switch svc.Spec.Type {
	case api.ServiceTypeClusterIP, api.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case api.ServiceTypeLoadBalancer:
		set := map[string]bool{}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			addLBAddress(set, in.IP, in.Hostname)
		}
		lb := sortedSet(set)
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(lb, svc.Spec.ExternalIPs...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case api.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// ServiceCells is a Service's row: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S)
// AGE, then (wide) SELECTOR.
func ServiceCells(svc *api.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	return []any{
		svc.Name, svc.Spec.Type, clusterIP, ServiceExternalIP(svc), ServicePorts(svc.Spec.Ports),
		Age(svc.CreationTimestamp.Time, now), FormatLabels(svc.Spec.Selector),
	}
}

// ---- EndpointSlices ----

func endpointSliceColumns() []Column {
	return []Column{
		nameColumn,
		col("AddressType", "addressType specifies the type of address carried by this EndpointSlice."),
		col("Ports", "ports specifies the list of network ports exposed by each endpoint in this slice."),
		col("Endpoints", "endpoints is a list of unique endpoints in this slice."),
		ageColumn,
	}
}

// listWithMore joins up to max items with "," and says how many more there
// were ("a,b,c + 2 more..."); "<unset>" for none.
func listWithMore(list []string, count, max int) string {
	ret := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		return "<unset>"
	}
	return ret
}

// EndpointSlicePorts is an EndpointSlice's PORTS cell: up to three port
// numbers (a name for a port without number, "*" for neither) joined by ",".
func EndpointSlicePorts(ports []api.EndpointPort) string {
	const max = 3
	var list []string
	for _, p := range ports {
		if len(list) < max {
			s := "*"
			if p.Port != nil {
				s = strconv.Itoa(int(*p.Port))
			} else if p.Name != nil {
				s = *p.Name
			}
			list = append(list, s)
		}
	}
	return listWithMore(list, len(ports), max)
}

// EndpointSliceEndpoints is an EndpointSlice's ENDPOINTS cell: up to three
// addresses, then "+ N more...".
func EndpointSliceEndpoints(eps []api.Endpoint) string {
	const max = 3
	var list []string
	count := 0
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			if len(list) < max {
				list = append(list, a)
			}
			count++
		}
	}
	return listWithMore(list, count, max)
}

// EndpointSliceCells is an EndpointSlice's row: NAME ADDRESSTYPE PORTS
// ENDPOINTS AGE.
func EndpointSliceCells(s *api.EndpointSlice, now time.Time) []any {
	return []any{s.Name, s.AddressType, EndpointSlicePorts(s.Ports), EndpointSliceEndpoints(s.Endpoints), Age(s.CreationTimestamp.Time, now)}
}

// ---- Endpoints ----

func endpointsColumns() []Column {
	return []Column{
		nameColumn,
		col("Endpoints", "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service."),
		ageColumn,
	}
}

// EndpointsEndpoints is an Endpoints' ENDPOINTS cell, as Kubernetes'
// formatEndpoints writes it: "<none>" without subsets; otherwise the ready
// addresses as ip:port for every port of their subset (the bare IP in a
// subset without ports), the first three joined by "," and then
// "+ N more..." counting the rest. Not-ready addresses are not shown, so
// an Endpoints with only those has an empty cell.
func EndpointsEndpoints(e *api.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more := false
	count := 0
	for i := range e.Subsets {
		ss := &e.Subsets[i]
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

// EndpointsCells is an Endpoints' row: NAME ENDPOINTS AGE.
func EndpointsCells(e *api.Endpoints, now time.Time) []any {
	return []any{e.Name, EndpointsEndpoints(e), Age(e.CreationTimestamp.Time, now)}
}

// ---- Deployments and StatefulSets ----

func deploymentColumns() []Column {
	return []Column{
		nameColumn,
		col("Ready", "Number of the pod with ready state"),
		col("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
		col("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.")),
	}
}

func replicas(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// ContainerCells are a pod template's CONTAINERS and IMAGES cells: the
// names and images of its containers, comma-joined.
func ContainerCells(cs []api.Container) (names, images string) {
	n := make([]string, len(cs))
	im := make([]string, len(cs))
	for i, c := range cs {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// DeploymentCells is a Deployment's row: NAME READY UP-TO-DATE AVAILABLE
// AGE, then (wide) CONTAINERS IMAGES SELECTOR.
func DeploymentCells(d *api.Deployment, now time.Time) []any {
	names, images := ContainerCells(d.Spec.Template.Spec.Containers)
	return []any{
		d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), Age(d.CreationTimestamp.Time, now),
		names, images, api.SelectorString(d.Spec.Selector),
	}
}

func statefulSetColumns() []Column {
	return []Column{
		nameColumn,
		col("Ready", "Number of the pod with ready state"),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
	}
}

// StatefulSetCells is a StatefulSet's row: NAME READY AGE, then (wide)
// CONTAINERS IMAGES.
func StatefulSetCells(s *api.StatefulSet, now time.Time) []any {
	names, images := ContainerCells(s.Spec.Template.Spec.Containers)
	return []any{
		s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)), Age(s.CreationTimestamp.Time, now),
		names, images,
	}
}

// ---- Nodes and Namespaces ----

func nodeColumns() []Column {
	return []Column{
		nameColumn,
		col("Status", "The status of the node"),
		col("Roles", "The roles of the node"),
		ageColumn,
		col("Version", "Kubelet Version reported by the node."),
		wide(col("Internal-IP", "List of addresses reachable to the node.")),
		wide(col("External-IP", "List of addresses reachable to the node.")),
		wide(col("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).")),
		wide(col("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).")),
		wide(col("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).")),
	}
}

// NodeRoles are a node's roles from its node-role.kubernetes.io/<role> and
// kubernetes.io/role labels, sorted.
func NodeRoles(n *api.Node) []string {
	set := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				set[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			set[v] = true
		}
	}
	return sortedSet(set)
}

func nodeAddress(n *api.Node, typ string) string {
	for _, a := range n.Status.Addresses {
		if a.Type == typ {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// NodeCells is a Node's row: NAME STATUS ROLES AGE VERSION, then (wide)
// INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME.
func NodeCells(n *api.Node, now time.Time) []any {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			if c.Status == api.ConditionTrue {
				status = append(status, c.Type)
			} else {
				status = append(status, "Not"+c.Type)
			}
			break
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	info := n.Status.NodeInfo
	return []any{
		n.Name, strings.Join(status, ","), orNone(strings.Join(NodeRoles(n), ",")), Age(n.CreationTimestamp.Time, now), info.KubeletVersion,
		nodeAddress(n, api.NodeInternalIP), nodeAddress(n, api.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}
}

func namespaceColumns() []Column {
	return []Column{nameColumn, col("Status", "The status of the namespace"), ageColumn}
}

// NamespaceCells is a Namespace's row: NAME STATUS AGE.
func NamespaceCells(ns *api.Namespace, now time.Time) []any {
	return []any{ns.Name, ns.Status.Phase, Age(ns.CreationTimestamp.Time, now)}
}

// ---- Events ----

func eventColumns() []Column {
	return []Column{
		col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
		col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
		col("Reason", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
		col("Object", "The object that this event is about."),
		wide(col("Subobject", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].")),
		wide(col("Source", "The component reporting this event. Should be a short machine understandable string.")),
		col("Message", "A human-readable description of the status of this operation."),
		wide(col("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)")),
		wide(col("Count", "The number of times this event has occurred.")),
		wide(Column{Name: "Name", Type: "string", Format: "name", Description: descName}),
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// EventCells is an Event's row: LAST SEEN TYPE REASON OBJECT, (wide)
// SUBOBJECT SOURCE, MESSAGE, (wide) FIRST SEEN COUNT NAME.
func EventCells(e *api.Event, now time.Time) []any {
	first := Age(e.FirstTimestamp.Time, now)
	if e.FirstTimestamp.IsZero() {
		first = Age(e.EventTime.Time, now)
	}
	last := Age(e.LastTimestamp.Time, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = Age(e.Series.LastObservedTime.Time, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	source := firstNonEmpty(e.Source.Component, e.ReportingController)
	if inst := firstNonEmpty(e.Source.Host, e.ReportingInstance); inst != "" {
		source += ", " + inst
	}
	return []any{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source,
		strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}

// ---- ConfigMaps, Secrets, ServiceAccounts ----

func configMapColumns() []Column {
	return []Column{nameColumn, col("Data", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."), ageColumn}
}

// ConfigMapCells is a ConfigMap's row: NAME DATA AGE, DATA counting the
// keys of data and binaryData.
func ConfigMapCells(c *api.ConfigMap, now time.Time) []any {
	return []any{c.Name, int64(len(c.Data) + len(c.BinaryData)), Age(c.CreationTimestamp.Time, now)}
}

func secretColumns() []Column {
	return []Column{
		nameColumn,
		col("Type", "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
		col("Data", "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
		ageColumn,
	}
}

// SecretCells is a Secret's row: NAME TYPE DATA AGE, DATA counting keys
// (never showing a value).
func SecretCells(s *api.Secret, now time.Time) []any {
	return []any{s.Name, s.Type, int64(len(s.Data)), Age(s.CreationTimestamp.Time, now)}
}

func serviceAccountColumns() []Column {
	return []Column{nameColumn, col("Secrets", "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."), ageColumn}
}

// ServiceAccountCells is a ServiceAccount's row: NAME SECRETS AGE.
func ServiceAccountCells(sa *api.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, int64(len(sa.Secrets)), Age(sa.CreationTimestamp.Time, now)}
}

// ---- Leases, ServiceCIDRs, IPAddresses ----

func leaseColumns() []Column {
	return []Column{nameColumn, col("Holder", "holderIdentity contains the identity of the holder of a current lease."), ageColumn}
}

// LeaseCells is a Lease's row: NAME HOLDER AGE.
func LeaseCells(l *api.Lease, now time.Time) []any {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{l.Name, holder, Age(l.CreationTimestamp.Time, now)}
}

func serviceCIDRColumns() []Column {
	return []Column{nameColumn, col("CIDRs", "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs."), ageColumn}
}

// ServiceCIDRCells is a ServiceCIDR's row: NAME CIDRS AGE.
func ServiceCIDRCells(c *api.ServiceCIDR, now time.Time) []any {
	return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), Age(c.CreationTimestamp.Time, now)}
}

func ipAddressColumns() []Column {
	return []Column{nameColumn, col("ParentRef", "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.")}
}

// IPAddressCells is an IPAddress's row: NAME PARENTREF, the parent written
// resource[.group]/[namespace/]name ("services/default/web").
func IPAddressCells(ip *api.IPAddress, _ time.Time) []any {
	parent := "<none>"
	if r := ip.Spec.ParentRef; r != nil {
		parent = r.Resource
		if r.Group != "" {
			parent += "." + r.Group
		}
		parent = strings.ToLower(parent)
		if r.Namespace != "" {
			parent += "/" + r.Namespace
		}
		parent += "/" + r.Name
	}
	return []any{ip.Name, parent}
}

// ---- helpers ----

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// addLBAddress adds a load balancer ingress point's address to set: its
// IP, else its hostname (Services and Ingresses print them alike).
func addLBAddress(set map[string]bool, ip, hostname string) {
	if ip != "" {
		set[ip] = true
	} else if hostname != "" {
		set[hostname] = true
	}
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FormatLabels renders a label map as kubectl does ("app=web,tier=db",
// sorted by key); "<none>" when empty.
func FormatLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return orNone(strings.Join(parts, ","))
}
