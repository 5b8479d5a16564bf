package web

import "github.com/skiff-dev/skiff/api"

// DNSNamesForTest is serviceDNSNames' answer in plain fields.
type DNSNamesForTest struct {
	Exists             bool
	Answers, Endpoints []string // Endpoints: the per-endpoint names
	SRV                []string
}

// ServiceDNSNamesForTest exposes serviceDNSNames to the tests.
func ServiceDNSNamesForTest(svc *api.Service, eps []api.EndpointSlice, domain string) DNSNamesForTest {
	n := serviceDNSNames(svc, eps, domain)
	out := DNSNamesForTest{Exists: n.Exists, Answers: n.Answers, SRV: n.SRV}
	for _, e := range n.Endpoints {
		out.Endpoints = append(out.Endpoints, e.Name)
	}
	return out
}
