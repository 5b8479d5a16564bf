package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// endpoints is a core/v1 Endpoints object, which Skiff does not store:
// `get ep` builds one per Service from its EndpointSlices, one subset per
// slice, as the EndpointSlice mirroring of Kubernetes would show it.
type endpoints struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta   `json:"metadata"`
	Subsets      []endpointSubset `json:"subsets,omitempty"`
}

type endpointSubset struct {
	Addresses         []endpointAddress `json:"addresses,omitempty"`
	NotReadyAddresses []endpointAddress `json:"notReadyAddresses,omitempty"`
	Ports             []endpointPort    `json:"ports,omitempty"`
}

type endpointAddress struct {
	IP        string               `json:"ip"`
	Hostname  string               `json:"hostname,omitempty"`
	NodeName  *string              `json:"nodeName,omitempty"`
	TargetRef *api.ObjectReference `json:"targetRef,omitempty"`
}

type endpointPort struct {
	Name     string       `json:"name,omitempty"`
	Port     int32        `json:"port"`
	Protocol api.Protocol `json:"protocol,omitempty"`
}

// endpointsFromSlices groups slices by their Service, in the order the
// Services first appear.
func endpointsFromSlices(slices []api.EndpointSlice) []endpoints {
	var out []endpoints
	index := map[string]int{}
	for i := range slices {
		s := &slices[i]
		svc := s.Labels[api.LabelServiceName]
		if svc == "" {
			continue
		}
		key := s.Namespace + "/" + svc
		j, ok := index[key]
		if !ok {
			j = len(out)
			index[key] = j
			out = append(out, endpoints{
				TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
				Metadata: api.ObjectMeta{Name: svc, Namespace: s.Namespace, CreationTimestamp: s.CreationTimestamp,
					Labels: map[string]string{api.LabelServiceName: svc}},
			})
		}
		ep := &out[j]
		if s.CreationTimestamp.Before(ep.Metadata.CreationTimestamp.Time) {
			ep.Metadata.CreationTimestamp = s.CreationTimestamp
		}
		var sub endpointSubset
		for _, p := range s.Ports {
			ep := endpointPort{}
			if p.Name != nil {
				ep.Name = *p.Name
			}
			if p.Port != nil {
				ep.Port = *p.Port
			}
			if p.Protocol != nil {
				ep.Protocol = *p.Protocol
			}
			sub.Ports = append(sub.Ports, ep)
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				addr := endpointAddress{IP: a, NodeName: e.NodeName, TargetRef: e.TargetRef}
				if e.Hostname != nil {
					addr.Hostname = *e.Hostname
				}
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					sub.Addresses = append(sub.Addresses, addr)
				} else {
					sub.NotReadyAddresses = append(sub.NotReadyAddresses, addr)
				}
			}
		}
		if len(sub.Addresses)+len(sub.NotReadyAddresses) > 0 {
			ep.Subsets = append(ep.Subsets, sub)
		}
	}
	return out
}

// endpointsRow is kubectl's Endpoints row: ready ip:port pairs, at most 3.
func endpointsRow(e *endpoints, now time.Time) []string {
	const limit = 3
	var list []string
	count := 0
	more := false
	for _, s := range e.Subsets {
		ports := s.Ports
		if len(ports) == 0 {
			ports = []endpointPort{{}}
		}
		for _, p := range ports {
			for _, a := range s.Addresses {
				hostPort := a.IP
				if p.Port != 0 {
					hostPort = net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port)))
				}
				if len(list) < limit {
					list = append(list, hostPort)
				} else {
					more = true
				}
				count++
			}
		}
	}
	text := "<none>"
	if len(list) > 0 {
		text = listWithMore(list, more, count, limit)
	}
	return []string{e.Metadata.Name, text, age(e.Metadata.CreationTimestamp.Time, now)}
}

// listEndpoints builds the Endpoints of ns ("" all) from the slices the
// selectors pick, or of the named Services.
func (s *session) listEndpoints(ctx context.Context, ns string, opts client.ListOptions, names []string) ([]json.RawMessage, []error, error) {
	sliceInfo, err := s.resolve("endpointslices", false)
	if err != nil {
		return nil, nil, err
	}
	var list api.EndpointSliceList
	if err := s.c.List(ctx, sliceInfo, ns, opts, &list); err != nil {
		return nil, nil, err
	}
	eps := endpointsFromSlices(list.Items)
	byName := map[string]endpoints{}
	for _, e := range eps {
		byName[e.Metadata.Name] = e
	}
	var chosen []endpoints
	var missing []error
	if len(names) == 0 {
		chosen = eps
	}
	for _, n := range names {
		e, ok := byName[n]
		if !ok {
			missing = append(missing, client.NewAPIError(404, api.StatusReasonNotFound, "endpoints %q not found", n))
			continue
		}
		chosen = append(chosen, e)
	}
	var out []json.RawMessage
	for _, e := range chosen {
		raw, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("encode endpoints: %w", err)
		}
		out = append(out, raw)
	}
	return out, missing, nil
}
