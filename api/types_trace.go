package api

// Trace is Skiff's own object (apiVersion skiff.dev/v1, kind Trace): the
// path one request from a pod to a URL takes, step by step, as the node
// that runs the pod sees it. `skiff trace POD URL -o json` prints it and the
// dashboard draws it. It is computed on demand and never stored.
type Trace struct {
	TypeMeta `json:",inline"`

	// Pod is the client pod the request starts from.
	Pod TracePod `json:"pod"`
	// URL is the request as given (http://backend-svc, backend-svc:80, ...).
	URL string `json:"url"`
	// Host and Port are what the URL names (Port defaults from the scheme).
	Host string `json:"host"`
	Port int32  `json:"port"`
	// Protocol is TCP or UDP.
	Protocol string `json:"protocol"`

	// DNS is the name resolution step (absent when Host is an IP).
	DNS *TraceDNS `json:"dns,omitempty"`
	// Service is the Service the destination address and port belong to
	// (absent when it matches none).
	Service *TraceService `json:"service,omitempty"`
	// Rules are the kernel rules (iptables chains, nftables map elements
	// and rules, or IPVS entries) that a packet to Service.IP:Port meets on
	// the pod's node, in the order it meets them, read from the kernel.
	Rules *TraceRules `json:"rules,omitempty"`
	// Endpoints are the endpoints that can receive the traffic, with the
	// probability the rules give each.
	Endpoints []TraceEndpoint `json:"endpoints,omitempty"`
	// Conntrack are the live conntrack entries for Service.IP:Port on the
	// pod's node.
	Conntrack []TraceConntrack `json:"conntrack,omitempty"`
	// Egress is how a packet to a destination outside the cluster (no
	// Service, no pod, not the service CIDR) leaves the pod's node; absent
	// for a destination inside the cluster.
	Egress *TraceEgress `json:"egress,omitempty"`
	// Warnings explain a broken step in words (no endpoints ready, a name
	// that does not resolve, a rule missing on the node, ...).
	Warnings []string `json:"warnings,omitempty"`
}

// TraceEgress is the step out of the cluster.
type TraceEgress struct {
	// Masquerade: the node rewrites the packet's source to its own address
	// (--egress-masquerade), so that the answer finds its way back.
	Masquerade bool `json:"masquerade"`
	// Rules are the node's egress rules as read from the kernel.
	Rules []string `json:"rules,omitempty"`
}

// TracePod names the client pod.
type TracePod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	IP        string `json:"ip,omitempty"`
	NodeName  string `json:"nodeName,omitempty"`
}

// TraceDNS is the resolution of Host through the pod's resolv.conf.
type TraceDNS struct {
	// Nameservers, Search and Ndots are the pod's resolv.conf.
	Nameservers []string `json:"nameservers"`
	Search      []string `json:"search,omitempty"`
	Ndots       int      `json:"ndots"`
	// Queries are the names tried in order (the search expansion), each
	// with its answer, up to the first that answered.
	Queries []TraceDNSQuery `json:"queries"`
	// Answer is the address the client connects to ("" if none).
	Answer string `json:"answer,omitempty"`
}

// TraceDNSQuery is one query of the search expansion.
type TraceDNSQuery struct {
	Name    string   `json:"name"`  // FQDN with the trailing dot
	Type    string   `json:"type"`  // A, AAAA
	Rcode   string   `json:"rcode"` // NOERROR, NXDOMAIN, ...
	Answers []string `json:"answers,omitempty"`
	CNAME   string   `json:"cname,omitempty"`
}

// TraceService is the Service port the destination hits.
type TraceService struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	// IP and Port are the destination as the packet carries it (a
	// ClusterIP, a LoadBalancer IP, or a node IP with a NodePort).
	IP         string `json:"ip"`
	Port       int32  `json:"port"`
	PortName   string `json:"portName,omitempty"`
	TargetPort string `json:"targetPort,omitempty"`
	Headless   bool   `json:"headless,omitempty"`
}

// TraceRules are the rules a proxy mode programmed for the destination.
type TraceRules struct {
	Mode    string      `json:"mode"` // iptables, nftables, ipvs
	Entries []TraceRule `json:"entries"`
}

// TraceRule is one rule, map element or IPVS entry, as the kernel lists it.
type TraceRule struct {
	// Table and Chain place it (nat/KUBE-SVC-XYZ; skiff/services;
	// for IPVS the virtual service "TCP 10.96.0.10:80").
	Table string `json:"table,omitempty"`
	Chain string `json:"chain,omitempty"`
	// Text is the rule as iptables-save, nft list or ipvsadm -Ln shows it.
	Text string `json:"text"`
	// Probability is the chance this rule is taken when reached (the
	// statistic module's --probability, 1/n for numgen, the IPVS weight
	// share); 0 when the rule is not a choice.
	Probability float64 `json:"probability,omitempty"`
	// Endpoint is the ip:port a DNAT/real-server rule sends to.
	Endpoint string `json:"endpoint,omitempty"`
}

// TraceEndpoint is one endpoint of the Service port.
type TraceEndpoint struct {
	IP          string  `json:"ip"`
	Port        int32   `json:"port"`
	Ready       bool    `json:"ready"`
	Serving     bool    `json:"serving"`
	Terminating bool    `json:"terminating"`
	NodeName    string  `json:"nodeName,omitempty"`
	Pod         string  `json:"pod,omitempty"` // targetRef name
	Probability float64 `json:"probability"`   // the overall chance a new connection lands here
}

// TraceConntrack is one conntrack entry.
type TraceConntrack struct {
	Protocol string `json:"protocol"`
	Src      string `json:"src"`      // ip:port of the original direction
	Dst      string `json:"dst"`      // ip:port of the original direction
	ReplySrc string `json:"replySrc"` // the endpoint that answers (after DNAT)
	State    string `json:"state,omitempty"`
	Timeout  int    `json:"timeout,omitempty"` // seconds left
}
