package web

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/dns"
	"github.com/skiff-dev/skiff/dns/source"
)

// serviceInfo is /ui/services/{ns}/{name}'s answer: what the service page
// shows beside the live store: the Service's DNS names (as Skiff's DNS
// answers them) and its Endpoints object with the byte comparison against
// its EndpointSlices.
type serviceInfo struct {
	Domain string   `json:"domain"`
	DNS    dnsNames `json:"dns"`
	// Endpoints is the Endpoints object of the same name (nil when there
	// is none), EndpointsBytes its size as stored.
	Endpoints      json.RawMessage `json:"endpoints,omitempty"`
	EndpointsBytes int             `json:"endpointsBytes"`
	EndpointsError string          `json:"endpointsError,omitempty"`
	// Slices are the Service's EndpointSlices' sizes as stored; SliceBytes
	// their sum.
	Slices      []sliceSize `json:"slices"`
	SliceBytes  int         `json:"sliceBytes"`
	SlicesError string      `json:"slicesError,omitempty"`
}

type sliceSize struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// dnsNames are a Service's names in the cluster DNS.
type dnsNames struct {
	// Kind is "ClusterIP" (the name answers the ClusterIPs), "Headless"
	// (the ready endpoints' addresses) or "ExternalName" (a CNAME).
	Kind string `json:"kind"`
	// Exists is false when the name has no record (a headless Service
	// without ready endpoints, a ClusterIP not allocated yet): the DNS
	// answers NXDOMAIN, for every name under it too.
	Exists bool `json:"exists"`
	// Names are the ways a pod can write the Service's name: "name" (from
	// the same namespace), "name.ns", "name.ns.svc" (through the pods'
	// search list) and the full "name.ns.svc.<domain>".
	Names   []string `json:"names"`
	Answers []string `json:"answers"` // addresses, or the CNAME target
	// Endpoints (headless only): one name per ready endpoint,
	// "<hostname or dashed IP>.<name>.<ns>.svc.<domain>", and its addresses.
	Endpoints []endpointName `json:"endpoints,omitempty"`
	// SRV are the SRV names of the named ports.
	SRV []string `json:"srv,omitempty"`
}

type endpointName struct {
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	Pod       string   `json:"pod,omitempty"`
}

// serviceDNSNames lists a Service's names as Skiff's DNS (package dns)
// answers them, from the same conversion the DNS's watch cache uses
// (dns/source): the Service name answers its ClusterIPs; a headless
// Service's name its ready endpoints' addresses (all of them with
// publishNotReadyAddresses), and each such endpoint has a name of its
// own, its hostname (set when the pod's hostname and subdomain name this
// Service) or else its dashed address (10-244-1-5, fd00--5: upstream's
// form); an ExternalName Service is a CNAME; named ports have SRV names
// _<port>._<proto>.<name>.<ns>.svc.<domain> (a headless Service's only
// while it has ready endpoints).
func serviceDNSNames(svc *api.Service, eps []api.EndpointSlice, domain string) dnsNames {
	s := source.ServiceFrom(svc)
	base := strings.ToLower(s.Name + "." + s.Namespace)
	fq := base + ".svc." + domain
	out := dnsNames{Kind: "ClusterIP", Names: []string{strings.ToLower(s.Name), base, base + ".svc", fq}, Answers: []string{}}
	srvProto := map[string]bool{}
	switch {
	case s.Type == dns.TypeExternalName:
		out.Kind = "ExternalName"
		if s.ExternalName != "" {
			out.Answers = append(out.Answers, strings.ToLower(strings.TrimSuffix(s.ExternalName, "."))+".")
			out.Exists = true
		}
		return out
	case s.Headless:
		out.Kind = "Headless"
		var all []netip.Addr
		byLabel := map[string]*endpointName{}
		for i := range eps {
			es, ok := source.EndpointSliceFrom(&eps[i])
			if !ok || es.Service != s.Name || es.Namespace != s.Namespace {
				continue
			}
			for _, e := range es.Endpoints {
				if !e.Ready && !s.PublishNotReady {
					continue
				}
				for _, a := range e.Addresses {
					a = a.Unmap().WithZone("")
					if !a.IsValid() {
						continue
					}
					label := strings.ToLower(e.Hostname)
					if label == "" {
						label = dashedAddr(a)
					}
					all = append(all, a)
					n := byLabel[label]
					if n == nil {
						n = &endpointName{Name: label + "." + fq, Pod: e.TargetPodName}
						byLabel[label] = n
					}
					n.Addresses = append(n.Addresses, a.String())
					for _, p := range es.Ports {
						if p.Name != "" {
							srvProto["_"+strings.ToLower(p.Name)+"._"+strings.ToLower(p.Protocol)] = true
						}
					}
				}
			}
		}
		for _, n := range byLabel {
			slices.Sort(n.Addresses)
			n.Addresses = slices.Compact(n.Addresses)
			out.Endpoints = append(out.Endpoints, *n)
		}
		slices.SortFunc(out.Endpoints, func(a, b endpointName) int { return cmp.Compare(a.Name, b.Name) })
		slices.SortFunc(all, netip.Addr.Compare)
		for _, a := range slices.Compact(all) {
			out.Answers = append(out.Answers, a.String())
		}
	default:
		var ips []netip.Addr
		for _, a := range s.ClusterIPs {
			if a = a.Unmap().WithZone(""); a.IsValid() {
				ips = append(ips, a)
			}
		}
		slices.SortFunc(ips, netip.Addr.Compare)
		for _, a := range slices.Compact(ips) {
			out.Answers = append(out.Answers, a.String())
		}
		for _, p := range s.Ports {
			if p.Name != "" {
				srvProto["_"+strings.ToLower(p.Name)+"._"+strings.ToLower(p.Protocol)] = true
			}
		}
	}
	out.Exists = len(out.Answers) > 0
	if out.Exists {
		for k := range srvProto {
			out.SRV = append(out.SRV, k+"."+fq)
		}
		slices.Sort(out.SRV)
	}
	return out
}

// dashedAddr is an address as a DNS label, as package dns writes it:
// 10-244-1-5, fd00--5.
func dashedAddr(a netip.Addr) string {
	if a.Is4() {
		return strings.ReplaceAll(a.String(), ".", "-")
	}
	return strings.ReplaceAll(a.String(), ":", "-")
}

// serveService answers serviceInfo for one Service, read with the
// session's token. The sizes are the lengths of the JSON the API returns
// for each object, which is how Skiff stores them (the API serves the
// stored bytes).
func (d *Dashboard) serveService(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	ns, name := r.PathValue("ns"), r.PathValue("name")
	get := func(path, query string) *bufferWriter {
		return d.callAPI(r.Context(), r, http.MethodGet, path, query, a.sess.Token, "", nil)
	}
	base := "/api/v1/namespaces/" + url.PathEscape(ns)
	res := get(base+"/services/"+url.PathEscape(name), "")
	if res.code != http.StatusOK {
		passStatus(w, res)
		return
	}
	var svc api.Service
	if err := json.Unmarshal(res.body.Bytes(), &svc); err != nil {
		writeJSONError(w, http.StatusBadGateway, "service: "+err.Error())
		return
	}
	info := serviceInfo{Domain: d.cfg.ClusterDomain, Slices: []sliceSize{}}

	var eps []api.EndpointSlice
	sel := url.Values{"labelSelector": {api.LabelServiceName + "=" + name}}.Encode()
	if res := get("/apis/discovery.k8s.io/v1/namespaces/"+url.PathEscape(ns)+"/endpointslices", sel); res.code != http.StatusOK {
		info.SlicesError = statusMessage(res)
	} else {
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(res.body.Bytes(), &l); err != nil {
			info.SlicesError = err.Error()
		}
		for _, raw := range l.Items {
			var es api.EndpointSlice
			if err := json.Unmarshal(raw, &es); err != nil {
				continue
			}
			eps = append(eps, es)
			info.Slices = append(info.Slices, sliceSize{Name: es.Name, Bytes: len(raw)})
			info.SliceBytes += len(raw)
		}
		slices.SortFunc(info.Slices, func(a, b sliceSize) int { return cmp.Compare(a.Name, b.Name) })
	}
	info.DNS = serviceDNSNames(&svc, eps, d.cfg.ClusterDomain)

	switch res := get(base+"/endpoints/"+url.PathEscape(name), ""); res.code {
	case http.StatusOK:
		b := bytes.TrimSpace(res.body.Bytes())
		info.Endpoints, info.EndpointsBytes = json.RawMessage(b), len(b)
	case http.StatusNotFound:
	default:
		info.EndpointsError = statusMessage(res)
	}
	writeJSON(w, http.StatusOK, info)
}

// passStatus answers the API's refusal as {"message": ...} with its code.
func passStatus(w http.ResponseWriter, res *bufferWriter) {
	writeJSONError(w, res.code, statusMessage(res))
}
