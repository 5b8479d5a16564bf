package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- Ingresses ----

func ingressColumns() []Column {
	return []Column{
		nameColumn,
		col("Class", "The name of the IngressClass resource that should be used for additional configuration"),
		col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
		col("Address", "Address is a list containing ingress points for the load-balancer"),
		col("Ports", "Ports of TLS configurations that open"),
		ageColumn,
	}
}

// IngressCells is an Ingress's row: NAME CLASS HOSTS ADDRESS PORTS AGE,
// as kubectl's printIngress: CLASS "<none>" without ingressClassName;
// HOSTS as ingressHosts ("*" when no rule has a host); ADDRESS the load
// balancer's IPs or hostnames, sorted and comma-joined; PORTS "80", or
// "80, 443" with TLS.
func IngressCells(ing *api.Ingress, now time.Time) []any {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	ports := "80"
	if len(ing.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	set := map[string]bool{}
	for _, in := range ing.Status.LoadBalancer.Ingress {
		addLBAddress(set, in.IP, in.Hostname)
	}
	return []any{ing.Name, class, ingressHosts(ing.Spec.Rules), strings.Join(sortedSet(set), ","), ports,
		Age(ing.CreationTimestamp.Time, now)}
}

// ingressHosts is kubectl's formatHosts: the first three non-empty
// hosts; a rule after the third host adds " + N more..." (N counted from
// the rules, as kubectl counts).
func ingressHosts(rules []api.IngressRule) string {
	const max = 3
	var list []string
	more := false
	for _, r := range rules {
		if len(list) == max {
			more = true
		}
		if !more && r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	out := strings.Join(list, ",")
	if more {
		out += fmt.Sprintf(" + %d more...", len(rules)-max)
	}
	return out
}

// ---- IngressClasses ----

func ingressClassColumns() []Column {
	return []Column{
		nameColumn,
		col("Controller", "Controller that is responsible for handling this class"),
		col("Parameters", "A reference to a resource with additional parameters"),
		ageColumn,
	}
}

// IngressClassCells is an IngressClass's row: NAME CONTROLLER PARAMETERS
// AGE, PARAMETERS as "Kind[.apiGroup]/name" or "<none>" (kubectl's
// printIngressClass).
func IngressClassCells(c *api.IngressClass, now time.Time) []any {
	params := "<none>"
	if p := c.Spec.Parameters; p != nil {
		params = p.Kind
		if p.APIGroup != nil {
			params += "." + *p.APIGroup
		}
		params += "/" + p.Name
	}
	return []any{c.Name, c.Spec.Controller, params, Age(c.CreationTimestamp.Time, now)}
}

// ---- NetworkPolicies ----

func networkPolicyColumns() []Column {
	return []Column{
		nameColumn,
		col("Pod-Selector", "Selects the pods to which this NetworkPolicy object applies."),
		ageColumn,
	}
}

// NetworkPolicyCells is a NetworkPolicy's row: NAME POD-SELECTOR AGE, an
// empty selector as "<none>" (kubectl's printNetworkPolicy).
func NetworkPolicyCells(np *api.NetworkPolicy, now time.Time) []any {
	return []any{np.Name, orNone(api.SelectorString(&np.Spec.PodSelector)), Age(np.CreationTimestamp.Time, now)}
}
