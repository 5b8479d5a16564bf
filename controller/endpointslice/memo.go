package endpointslice

import (
	"slices"

	"github.com/skiff-dev/skiff/api"
)

// Memo remembers what Reconcile derived from each pod of one Service
// (its port set and endpoints), so that a sync of a large Service only
// derives the pods that changed since the last one and finds each
// existing endpoint's pod with one lookup. Reconcile's result never
// depends on a Memo; it only saves work.
//
// A Memo belongs to one Service and must not be used by concurrent calls.
// It relies on pods being immutable values: a changed pod is a new
// object, as in an informer's cache. The zero value is ready to use.
type Memo struct {
	svc    svcFingerprint
	pods   map[*api.Pod]*podDerived
	byName map[string]*podDerived // the pods of the current call, by name
	gen    uint64                 // counts calls
}

// podDerived is what one pod contributes to one Service.
type podDerived struct {
	name    string
	seen    uint64 // the Memo generation that last saw the pod
	include bool   // the pod is an endpoint at all
	portKey string
	ports   []api.EndpointPort
	eps     [2]desiredEndpoint // by family
	hasAddr [2]bool
	placed  [2]uint64 // by family: the generation that placed the endpoint
}

// svcFingerprint holds what derived values depend on; a Memo is reset
// when it changes.
type svcFingerprint struct {
	ns, name        string
	publishNotReady bool
	ports           []api.ServicePort
	valid           bool
}

func fingerprint(svc *api.Service) svcFingerprint {
	return svcFingerprint{
		ns: svc.Namespace, name: svc.Name,
		publishNotReady: svc.Spec.PublishNotReadyAddresses,
		ports:           svc.Spec.Ports,
		valid:           true,
	}
}

func (f svcFingerprint) equal(g svcFingerprint) bool {
	return f.valid && g.valid && f.ns == g.ns && f.name == g.name &&
		f.publishNotReady == g.publishNotReady &&
		slices.EqualFunc(f.ports, g.ports, func(a, b api.ServicePort) bool {
			return a.Name == b.Name && a.Protocol == b.Protocol && a.Port == b.Port &&
				a.TargetPort == b.TargetPort && ptrEqual(a.AppProtocol, b.AppProtocol)
		})
}

// begin starts one Reconcile call for svc.
func (m *Memo) begin(svc *api.Service) {
	fp := fingerprint(svc)
	if !m.svc.equal(fp) || m.pods == nil {
		m.pods = map[*api.Pod]*podDerived{}
		m.byName = map[string]*podDerived{}
		fp.ports = cloneServicePorts(svc.Spec.Ports)
		m.svc = fp
	}
	m.gen++
}

// derive returns pod's derived values, computing them if the pod is new;
// dup reports a pod (or a pod name) already seen in this call.
func (m *Memo) derive(pod *api.Pod, svc *api.Service) (d *podDerived, dup bool) {
	d, ok := m.pods[pod]
	if !ok {
		d = derivePod(pod, svc)
		m.pods[pod] = d
	}
	if d.seen == m.gen {
		return d, true
	}
	if other := m.byName[pod.Name]; other != nil && other != d && other.seen == m.gen {
		return d, true
	}
	m.byName[pod.Name] = d
	d.seen = m.gen
	return d, false
}

// end forgets the pods the call did not see (changed or gone).
func (m *Memo) end() {
	for pod, d := range m.pods {
		if d.seen != m.gen {
			delete(m.pods, pod)
			if m.byName[d.name] == d {
				delete(m.byName, d.name)
			}
		}
	}
}

// lookup returns the pod of this call named name, or nil.
func (m *Memo) lookup(name string) *podDerived {
	if d := m.byName[name]; d != nil && d.seen == m.gen {
		return d
	}
	return nil
}

func derivePod(pod *api.Pod, svc *api.Service) *podDerived {
	d := &podDerived{name: pod.Name, include: podIsEndpoint(pod)}
	if !d.include {
		return d
	}
	d.ports = endpointPorts(svc, pod)
	d.portKey = portKey(d.ports)
	addrs := podAddresses(pod)
	for f := range addrs {
		d.eps[f] = newDesiredEndpoint(pod, svc, addrs[f])
		d.hasAddr[f] = len(addrs[f]) > 0
	}
	return d
}

func cloneServicePorts(ports []api.ServicePort) []api.ServicePort {
	out := slices.Clone(ports)
	for i := range out {
		out[i].AppProtocol = clonePtr(out[i].AppProtocol)
	}
	return out
}
