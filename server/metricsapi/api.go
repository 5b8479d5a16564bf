package metricsapi

import (
	"context"
	"sort"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/api/labels"
	"github.com/skiff-dev/skiff/apiserver"
)

// Group and Version of the resource metrics API.
const (
	Group   = "metrics.k8s.io"
	Version = "v1beta1"
)

const apiVersion = Group + "/" + Version

// NodeMetrics is metrics.k8s.io/v1beta1 NodeMetrics.
type NodeMetrics struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta   `json:"metadata"`
	Timestamp    api.Time         `json:"timestamp"`
	Window       string           `json:"window"`
	Usage        api.ResourceList `json:"usage"`
}

// NodeMetricsList is metrics.k8s.io/v1beta1 NodeMetricsList.
type NodeMetricsList struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ListMeta  `json:"metadata"`
	Items        []NodeMetrics `json:"items"`
}

// ContainerMetrics is one container of a PodMetrics.
type ContainerMetrics struct {
	Name  string           `json:"name"`
	Usage api.ResourceList `json:"usage"`
}

// PodMetrics is metrics.k8s.io/v1beta1 PodMetrics.
type PodMetrics struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta     `json:"metadata"`
	Timestamp    api.Time           `json:"timestamp"`
	Window       string             `json:"window"`
	Containers   []ContainerMetrics `json:"containers"`
}

// PodMetricsList is metrics.k8s.io/v1beta1 PodMetricsList.
type PodMetricsList struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ListMeta `json:"metadata"`
	Items        []PodMetrics `json:"items"`
}

// Objects reads the pods and nodes the metrics are about (the store).
type Objects interface {
	Pods(ctx context.Context, ns string) ([]api.Pod, error) // ns "": all
	Nodes(ctx context.Context) ([]api.Node, error)
}

// API serves metrics.k8s.io from a Store.
type API struct {
	Store   *Store
	Objects Objects
	Now     func() time.Time // nil: time.Now
}

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Reads are the apiserver.Config.Reads of the group.
func (a *API) Reads() map[string]*apiserver.ReadOnly {
	return map[string]*apiserver.ReadOnly{
		"nodes." + Group: {Group: Group, Version: Version, Kind: "NodeMetrics",
			Get: a.getNode, List: func(ctx context.Context, _ string, sel labels.Selector, f fields.Selector) (any, error) {
				return a.listNodes(ctx, sel, f)
			}},
		"pods." + Group: {Group: Group, Version: Version, Kind: "PodMetrics", Namespaced: true,
			Get: a.getPod, List: func(ctx context.Context, ns string, sel labels.Selector, f fields.Selector) (any, error) {
				return a.listPods(ctx, ns, sel, f)
			}},
	}
}

func (a *API) nodeMetrics(n *api.Node, u Usage) NodeMetrics {
	return NodeMetrics{
		TypeMeta:  api.TypeMeta{Kind: "NodeMetrics", APIVersion: apiVersion},
		Metadata:  api.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: api.NewTime(a.now())},
		Timestamp: api.NewTime(u.Timestamp), Window: u.Window.String(),
		Usage: api.ResourceList{"cpu": api.Quantity(CPUQuantity(u.NanoCores)), "memory": api.Quantity(MemoryQuantity(u.MemoryBytes))},
	}
}

func (a *API) podMetrics(p *api.Pod, u PodUsage) PodMetrics {
	pm := PodMetrics{
		TypeMeta:  api.TypeMeta{Kind: "PodMetrics", APIVersion: apiVersion},
		Metadata:  api.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: api.NewTime(a.now())},
		Timestamp: api.NewTime(u.Timestamp), Window: u.Window.String(), Containers: []ContainerMetrics{},
	}
	for _, c := range u.Containers {
		pm.Containers = append(pm.Containers, ContainerMetrics{Name: c.Name,
			Usage: api.ResourceList{"cpu": api.Quantity(CPUQuantity(c.NanoCores)), "memory": api.Quantity(MemoryQuantity(c.MemoryBytes))}})
	}
	return pm
}

// matches: the object's labels and metadata fields pass the selectors.
func matches(sel labels.Selector, f fields.Selector, m *api.ObjectMeta) bool {
	if sel != nil && !sel.Matches(m.Labels) {
		return false
	}
	return f == nil || f.Matches(map[string]string{"metadata.name": m.Name, "metadata.namespace": m.Namespace})
}

func (a *API) listNodes(ctx context.Context, sel labels.Selector, f fields.Selector) (*NodeMetricsList, error) {
	nodes, err := a.Objects.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := &NodeMetricsList{TypeMeta: api.TypeMeta{Kind: "NodeMetricsList", APIVersion: apiVersion}, Items: []NodeMetrics{}}
	for i := range nodes {
		n := &nodes[i]
		if !matches(sel, f, &n.ObjectMeta) {
			continue
		}
		if u, ok := a.Store.Node(n.Name); ok {
			out.Items = append(out.Items, a.nodeMetrics(n, u))
		}
	}
	sort.Slice(out.Items, func(i, j int) bool { return out.Items[i].Metadata.Name < out.Items[j].Metadata.Name })
	return out, nil
}

func (a *API) getNode(ctx context.Context, _, name string) (any, error) {
	nodes, err := a.Objects.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		if nodes[i].Name == name {
			if u, ok := a.Store.Node(name); ok {
				return a.nodeMetrics(&nodes[i], u), nil
			}
			break
		}
	}
	return nil, apiserver.NewNotFound("nodemetrics."+Group, name)
}

func (a *API) listPods(ctx context.Context, ns string, sel labels.Selector, f fields.Selector) (*PodMetricsList, error) {
	pods, err := a.Objects.Pods(ctx, ns)
	if err != nil {
		return nil, err
	}
	out := &PodMetricsList{TypeMeta: api.TypeMeta{Kind: "PodMetricsList", APIVersion: apiVersion}, Items: []PodMetrics{}}
	for i := range pods {
		p := &pods[i]
		if !matches(sel, f, &p.ObjectMeta) {
			continue
		}
		if u, ok := a.Store.Pod(PodKey{p.Namespace, p.Name}); ok {
			out.Items = append(out.Items, a.podMetrics(p, u))
		}
	}
	sort.Slice(out.Items, func(i, j int) bool {
		x, y := out.Items[i].Metadata, out.Items[j].Metadata
		return x.Namespace < y.Namespace || (x.Namespace == y.Namespace && x.Name < y.Name)
	})
	return out, nil
}

func (a *API) getPod(ctx context.Context, ns, name string) (any, error) {
	pods, err := a.Objects.Pods(ctx, ns)
	if err != nil {
		return nil, err
	}
	for i := range pods {
		if pods[i].Name == name {
			if u, ok := a.Store.Pod(PodKey{ns, name}); ok {
				return a.podMetrics(&pods[i], u), nil
			}
			break
		}
	}
	return nil, apiserver.NewNotFound("podmetrics."+Group, ns+"/"+name)
}
