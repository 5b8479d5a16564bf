package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl/threeway"
)

type exposeOptions struct {
	create          createOptions
	name            string
	port            string
	targetPort      string
	protocol        string
	typ             string
	selector        string
	labels          string
	clusterIP       string
	externalIP      string
	portName        string
	sessionAffinity string
	loadBalancerIP  string
}

func newExposeCommand(g *globals) *cobra.Command {
	o := &exposeOptions{}
	cmd := &cobra.Command{
		Use:   "expose deployment|pod|service|statefulset|replicaset|replicationcontroller NAME [--port=PORT] [--target-port=PORT] [--name=NAME] [--type=TYPE] [--protocol=TCP|UDP|SCTP]",
		Short: "Create a service for a deployment, pod, statefulset, replica set, replication controller or service",
		Long: `Create a Service that selects the pods of an object: a Deployment's,
StatefulSet's or ReplicaSet's spec.selector.matchLabels, a
ReplicationController's spec.selector, a pod's labels, or a Service's
selector. Without --port the ports come from the pod template's container
ports (or the Service's ports).`,
		Example: `  skiff expose deployment compute-node --name=data-channel --port=9090
  skiff expose deploy/web --port=80 --target-port=8080 --type=NodePort`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDryRun(o.create.dryRun); err != nil {
				return err
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "name of the new service (default: the object's)")
	f.StringVar(&o.port, "port", "", "port the service serves on (default: the container ports)")
	f.StringVar(&o.targetPort, "target-port", "", "container port (number or name) traffic goes to (default: --port)")
	f.StringVar(&o.protocol, "protocol", "", "TCP, UDP or SCTP (default: the container port's, else TCP)")
	f.StringVar(&o.typ, "type", "", "ClusterIP (default), NodePort, LoadBalancer or ExternalName")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector of the service (default: the object's)")
	f.StringVar(&o.labels, "labels", "", "labels of the service (default: the object's)")
	f.StringVar(&o.clusterIP, "cluster-ip", "", `ClusterIP to ask for; "None" for a headless service`)
	f.StringVar(&o.externalIP, "external-ip", "", "an external IP of the service")
	f.StringVar(&o.portName, "port-name", "", "name of the port")
	f.StringVar(&o.sessionAffinity, "session-affinity", "", "None or ClientIP")
	f.StringVar(&o.loadBalancerIP, "load-balancer-ip", "", "IP a LoadBalancer service asks for")
	cmd.Flags().StringVar(&o.create.dryRun, "dry-run", "none", `"none", or "client" to print the service without creating it`)
	cmd.Flags().StringVarP(&o.create.output, "output", "o", "", "print the service: json, yaml, name")
	return cmd
}

func (o *exposeOptions) run(ctx context.Context, s *session, args []string) error {
	if len(args) == 0 {
		return usageError("You must provide one or more resources by argument or filename.")
	}
	info, name, err := s.oneTarget(args, "expose")
	if err != nil {
		return err
	}
	switch info.Resource {
	case "deployments", "pods", "services", "statefulsets", "replicasets", "replicationcontrollers":
	default:
		return usageError("cannot expose a %s", info.Kind)
	}
	ns := s.namespaceFor(info, false)
	p, err := client.ResourcePath(info, ns, name)
	if err != nil {
		return err
	}
	data, err := s.raw.getJSON(ctx, p, nil, acceptJSON)
	if err != nil {
		return err
	}
	selector, labels, ports, err := exposeSource(info, data)
	if err != nil {
		return err
	}
	if o.selector != "" {
		if selector, err = parseLabelList(o.selector); err != nil {
			return usageError("invalid --selector: %v", err)
		}
	}
	if len(selector) == 0 {
		return usageError("couldn't retrieve selectors via --selector flag or introspection: the %s has no selector", info.Kind)
	}
	if o.labels != "" {
		if labels, err = parseLabelList(o.labels); err != nil {
			return usageError("invalid --labels: %v", err)
		}
	}
	svcName := o.name
	if svcName == "" {
		svcName = name
	}

	var svcPorts []any
	if o.port != "" {
		port, err := strconv.Atoi(o.port)
		if err != nil || port < 1 || port > 65535 {
			return usageError("invalid --port %q", o.port)
		}
		proto := o.protocol
		if proto == "" {
			proto = "TCP"
			// the container port's protocol when it declares this port
			for _, cp := range ports {
				if cp.port == int32(port) && cp.protocol != "" {
					proto = cp.protocol
				}
			}
		}
		sp := map[string]any{"port": port, "protocol": proto, "targetPort": intOrString(o.targetPort, port)}
		if o.portName != "" {
			sp["name"] = o.portName
		}
		svcPorts = append(svcPorts, sp)
	} else {
		if len(ports) == 0 {
			return usageError("couldn't find port via --port flag or introspection")
		}
		for i, cp := range ports {
			proto := cp.protocol
			if o.protocol != "" {
				proto = o.protocol
			}
			if proto == "" {
				proto = "TCP"
			}
			sp := map[string]any{"port": cp.port, "protocol": proto}
			switch {
			case o.targetPort != "":
				sp["targetPort"] = intOrString(o.targetPort, int(cp.port))
			case cp.target != nil:
				sp["targetPort"] = cp.target
			default:
				sp["targetPort"] = cp.port
			}
			if len(ports) > 1 {
				sp["name"] = "port-" + strconv.Itoa(i+1)
				if cp.name != "" {
					sp["name"] = cp.name
				}
			}
			svcPorts = append(svcPorts, sp)
		}
	}
	spec := map[string]any{"ports": svcPorts, "selector": toAnyMap(selector)}
	if o.typ != "" {
		typ, ok := map[string]string{"clusterip": api.ServiceTypeClusterIP, "nodeport": api.ServiceTypeNodePort,
			"loadbalancer": api.ServiceTypeLoadBalancer, "externalname": api.ServiceTypeExternalName}[strings.ToLower(o.typ)]
		if !ok {
			return usageError("invalid --type %q: ClusterIP, NodePort, LoadBalancer or ExternalName", o.typ)
		}
		spec["type"] = typ
	}
	if o.clusterIP != "" {
		spec["clusterIP"] = o.clusterIP
	}
	if o.externalIP != "" {
		spec["externalIPs"] = []any{o.externalIP}
	}
	if o.sessionAffinity != "" {
		spec["sessionAffinity"] = o.sessionAffinity
	}
	if o.loadBalancerIP != "" {
		spec["loadBalancerIP"] = o.loadBalancerIP
	}
	meta := map[string]any{"name": svcName}
	if len(labels) > 0 {
		meta["labels"] = toAnyMap(labels)
	}
	svc := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}
	svcInfo, err := s.resolve("services")
	if err != nil {
		return err
	}
	f, err := parseOutput(o.create.output)
	if err != nil {
		return err
	}
	result := svc
	if o.create.dryRun != "client" {
		coll, err := client.ResourcePath(svcInfo, ns, "")
		if err != nil {
			return err
		}
		body, err := json.Marshal(svc)
		if err != nil {
			return err
		}
		var out []byte
		if err := s.c.Do(ctx, "POST", coll, body, &out); err != nil {
			return err
		}
		if result, err = threeway.Decode(out); err != nil {
			return err
		}
	} else {
		setNested(result, ns, "metadata", "namespace")
	}
	if f.kind == outTable {
		fmt.Fprintf(s.env.Out, "%s exposed%s\n", objectRef(svcInfo, svcName), dryRunSuffix(o.create.dryRun))
		return nil
	}
	return printObject(s.env.Out, f, result, objectRef(svcInfo, svcName))
}

// sourcePort is a port found on the exposed object.
type sourcePort struct {
	name     string
	port     int32
	protocol string
	target   any // a Service's targetPort
}

// exposeSource reads the selector, labels and ports of the exposed object.
func exposeSource(info *api.ResourceInfo, data []byte) (map[string]string, map[string]string, []sourcePort, error) {
	fromTemplate := func(meta api.ObjectMeta, sel *api.LabelSelector, spec *api.PodSpec) (map[string]string, map[string]string, []sourcePort, error) {
		if sel != nil && len(sel.MatchExpressions) > 0 {
			return nil, nil, nil, usageError("couldn't retrieve selectors via --selector flag or introspection: the %s has a selector with match expressions, which a Service cannot express", info.Kind)
		}
		var selector map[string]string
		if sel != nil {
			selector = sel.MatchLabels
		}
		return selector, meta.Labels, containerPorts(spec), nil
	}
	switch info.Resource {
	case "deployments":
		var d api.Deployment
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, nil, nil, err
		}
		return fromTemplate(d.ObjectMeta, d.Spec.Selector, &d.Spec.Template.Spec)
	case "statefulsets":
		var st api.StatefulSet
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, nil, nil, err
		}
		return fromTemplate(st.ObjectMeta, st.Spec.Selector, &st.Spec.Template.Spec)
	case "replicasets":
		var rs api.ReplicaSet
		if err := json.Unmarshal(data, &rs); err != nil {
			return nil, nil, nil, err
		}
		return fromTemplate(rs.ObjectMeta, rs.Spec.Selector, &rs.Spec.Template.Spec)
	case "replicationcontrollers":
		var rc api.ReplicationController
		if err := json.Unmarshal(data, &rc); err != nil {
			return nil, nil, nil, err
		}
		var spec api.PodSpec
		if rc.Spec.Template != nil {
			spec = rc.Spec.Template.Spec
		}
		return rc.Spec.Selector, rc.Labels, containerPorts(&spec), nil
	case "pods":
		var p api.Pod
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, nil, nil, err
		}
		return p.Labels, p.Labels, containerPorts(&p.Spec), nil
	default: // services
		var svc api.Service
		if err := json.Unmarshal(data, &svc); err != nil {
			return nil, nil, nil, err
		}
		var ports []sourcePort
		for _, sp := range svc.Spec.Ports {
			var target any
			if !sp.TargetPort.IsZero() {
				if sp.TargetPort.Type == api.String {
					target = sp.TargetPort.StrVal
				} else {
					target = sp.TargetPort.IntVal
				}
			}
			ports = append(ports, sourcePort{name: sp.Name, port: sp.Port, protocol: string(sp.Protocol), target: target})
		}
		return svc.Spec.Selector, svc.Labels, ports, nil
	}
}

func containerPorts(spec *api.PodSpec) []sourcePort {
	var out []sourcePort
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			out = append(out, sourcePort{name: p.Name, port: p.ContainerPort, protocol: string(p.Protocol)})
		}
	}
	return out
}

// intOrString is a --target-port value: a number, a name, or def when
// empty.
func intOrString(s string, def int) any {
	if s == "" {
		return def
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

// parseLabelList reads "a=b,c=d".
func parseLabelList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
