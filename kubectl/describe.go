package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
	"github.com/skiff-dev/skiff/client"
)

// Annotations describe does not show, as kubectl.
var hiddenAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
}

// timeFormat is how describe prints timestamps (time.RFC1123Z).
const timeFormat = time.RFC1123Z

var errNoResourceToDescribe = usageError("You must specify the type of resource to describe. Use \"skiff api-resources\" for a complete list of supported resources.")

type describeOptions struct {
	selector      string
	allNamespaces bool
	showEvents    bool
}

func newDescribeCommand(g *globals) *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME_PREFIX] | TYPE/NAME",
		Short: "Show details of a resource or group of resources",
		Long: `Show the details of objects, with their related events: labels,
selectors, IPs, ports, endpoints and conditions. A NAME that matches no
object exactly describes every object whose name starts with it.`,
		Example: `  skiff describe svc data-channel
  skiff describe deploy/compute-node
  skiff describe pods -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errNoResourceToDescribe
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.selector, "selector", "l", "", "label selector")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "describe across all namespaces")
	f.BoolVar(&o.showEvents, "show-events", true, "show the events of each object")
	return cmd
}

func (o *describeOptions) run(ctx context.Context, s *session, args []string) error {
	if len(args) == 0 {
		return errNoResourceToDescribe
	}
	targets, err := s.parseTargets(args)
	if err != nil {
		return err
	}
	var texts []string
	failed := false
	for _, t := range targets {
		ns := s.namespaceFor(t.info, o.allNamespaces && len(t.names) == 0)
		objs, errs := o.objects(ctx, s, t, ns)
		for _, e := range errs {
			fmt.Fprintln(s.env.ErrOut, errorText(e))
			failed = true
		}
		for _, raw := range objs {
			text, err := s.describe(ctx, t.info, raw, o.showEvents)
			if err != nil {
				return err
			}
			texts = append(texts, text)
		}
	}
	if len(texts) == 0 && !failed {
		fmt.Fprintln(s.env.ErrOut, noResourcesText(s, targets, o.allNamespaces))
	}
	if len(texts) > 0 {
		fmt.Fprint(s.env.Out, strings.Join(texts, "\n\n"))
	}
	if failed {
		return errPrinted
	}
	return nil
}

// objects finds what to describe: exact names, else name prefixes, else
// everything the selector picks.
func (o *describeOptions) objects(ctx context.Context, s *session, t target, ns string) ([][]byte, []error) {
	list := func() ([]json.RawMessage, error) {
		p, err := client.ResourcePath(t.info, ns, "")
		if err != nil {
			return nil, err
		}
		q := map[string][]string{}
		if o.selector != "" {
			q["labelSelector"] = []string{o.selector}
		}
		data, err := s.raw.getJSON(ctx, p, q, acceptJSON)
		if err != nil {
			return nil, err
		}
		items, _, err := rawItems(data)
		return items, err
	}
	var out [][]byte
	var errs []error
	if len(t.names) == 0 {
		items, err := list()
		if err != nil {
			return nil, []error{err}
		}
		for _, it := range items {
			out = append(out, it)
		}
		return out, nil
	}
	var all []json.RawMessage
	listed := false
	for _, name := range t.names {
		p, err := client.ResourcePath(t.info, ns, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		data, err := s.raw.getJSON(ctx, p, nil, acceptJSON)
		if err == nil {
			out = append(out, data)
			continue
		}
		if !client.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		if !listed {
			all, _ = list()
			listed = true
		}
		found := false
		for _, it := range all {
			var m struct {
				Metadata api.ObjectMeta `json:"metadata"`
			}
			if json.Unmarshal(it, &m) == nil && strings.HasPrefix(m.Metadata.Name, name) {
				out = append(out, it)
				found = true
			}
		}
		if !found {
			errs = append(errs, err)
		}
	}
	return out, errs
}

// prefixWriter writes "label:\tvalue" lines at indent levels into a
// tabwriter, as kubectl's describe does.
type prefixWriter struct {
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newPrefixWriter() *prefixWriter {
	p := &prefixWriter{}
	p.tw = tabwriter.NewWriter(&p.buf, 0, 8, 2, ' ', 0)
	return p
}

func (p *prefixWriter) write(level int, format string, args ...any) {
	fmt.Fprint(p.tw, strings.Repeat("  ", level))
	fmt.Fprintf(p.tw, format, args...)
}

func (p *prefixWriter) String() string {
	p.tw.Flush()
	return p.buf.String()
}

// writeMap writes labels ("k=v") or annotations ("k: v"), one per line,
// aligned under the first.
func (p *prefixWriter) writeMap(level int, title string, m map[string]string, sep string, skip []string) {
	p.write(level, "%s:\t", title)
	keys := slices.DeleteFunc(sortedKeys(m), func(k string) bool { return slices.Contains(skip, k) })
	if len(keys) == 0 {
		p.write(0, "<none>\n")
		return
	}
	for i, k := range keys {
		if i > 0 {
			p.write(level, "\t")
		}
		v := m[k]
		if sep == ": " && len(v) > 200 {
			v = v[:200] + "..."
		}
		p.write(0, "%s%s%s\n", k, sep, strings.ReplaceAll(v, "\n", " "))
	}
}

func (p *prefixWriter) meta(m *api.ObjectMeta, namespaced bool) {
	p.write(0, "Name:\t%s\n", m.Name)
	if namespaced {
		p.write(0, "Namespace:\t%s\n", m.Namespace)
	}
}

func (p *prefixWriter) labelsAndAnnotations(m *api.ObjectMeta) {
	p.writeMap(0, "Labels", m.Labels, "=", nil)
	p.writeMap(0, "Annotations", m.Annotations, ": ", hiddenAnnotations)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func unset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

// describe renders one object.
func (s *session) describe(ctx context.Context, info *api.ResourceInfo, raw []byte, withEvents bool) (string, error) {
	p := newPrefixWriter()
	var meta struct {
		Metadata api.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", fmt.Errorf("decode %s: %w", info.Kind, err)
	}
	var err error
	switch info.Resource {
	case "pods":
		err = describeTyped(raw, func(o *api.Pod) { s.describePod(p, o) })
	case "services":
		err = describeTyped(raw, func(o *api.Service) { s.describeService(ctx, p, o) })
	case "deployments":
		err = describeTyped(raw, func(o *api.Deployment) { s.describeDeployment(ctx, p, o) })
	case "statefulsets":
		err = describeTyped(raw, func(o *api.StatefulSet) { s.describeStatefulSet(ctx, p, o) })
	case "replicasets":
		err = describeTyped(raw, func(o *api.ReplicaSet) { s.describeReplicaSet(ctx, p, o) })
	case "replicationcontrollers":
		err = describeTyped(raw, func(o *api.ReplicationController) { s.describeReplicationController(ctx, p, o) })
	case "endpointslices":
		err = describeTyped(raw, func(o *api.EndpointSlice) { describeEndpointSlice(p, o) })
	case "nodes":
		err = describeTyped(raw, func(o *api.Node) { s.describeNode(ctx, p, o) })
	case "secrets":
		// As kubectl: the type and each key's size, never a value.
		err = describeTyped(raw, func(o *api.Secret) {
			p.meta(&o.ObjectMeta, true)
			p.labelsAndAnnotations(&o.ObjectMeta)
			p.write(0, "\nType:\t%s\n\nData\n====\n", o.Type)
			for _, k := range sortedKeys(o.Data) {
				p.write(0, "%s:\t%d bytes\n", k, len(o.Data[k]))
			}
		})
	case "namespaces":
		err = describeTyped(raw, func(o *api.Namespace) {
			p.meta(&o.ObjectMeta, false)
			p.labelsAndAnnotations(&o.ObjectMeta)
			p.write(0, "Status:\t%s\n", orNone(o.Status.Phase))
		})
	default:
		p.meta(&meta.Metadata, info.Namespaced)
		p.labelsAndAnnotations(&meta.Metadata)
		var m map[string]any
		if m, err = decodeMap(raw); err == nil {
			describeUnstructured(p, m)
		}
	}
	if err != nil {
		return "", fmt.Errorf("describe %s: %w", info.Kind, err)
	}
	if withEvents && info.Resource != "events" {
		s.describeEvents(ctx, p, info, &meta.Metadata)
	}
	return p.String(), nil
}

func describeTyped[T any](raw []byte, f func(*T)) error {
	var obj T
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	f(&obj)
	return nil
}

// describeEvents lists the events whose involvedObject is the object.
func (s *session) describeEvents(ctx context.Context, p *prefixWriter, info *api.ResourceInfo, m *api.ObjectMeta) {
	evInfo, err := s.resolve("events")
	if err != nil {
		return
	}
	var list api.EventList
	if err := s.c.List(ctx, evInfo, m.Namespace, client.ListOptions{}, &list); err != nil {
		p.write(0, "Events:\t<unavailable: %s>\n", strings.TrimPrefix(errorText(err), "Error from server "))
		return
	}
	var evs []api.Event
	for _, e := range list.Items {
		ref := e.InvolvedObject
		if (ref.UID != "" && ref.UID == m.UID) || (ref.UID == "" && ref.Kind == info.Kind && ref.Name == m.Name && ref.Namespace == m.Namespace) {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		p.write(0, "Events:\t<none>\n")
		return
	}
	slices.SortStableFunc(evs, func(a, b api.Event) int { return eventTime(&a).Compare(eventTime(&b)) })
	now := s.env.Now()
	p.write(0, "Events:\n")
	p.write(1, "Type\tReason\tAge\tFrom\tMessage\n")
	p.write(1, "----\t------\t----\t----\t-------\n")
	for _, e := range evs {
		ageText := age(eventTime(&e), now)
		count := e.Count
		if e.Series != nil {
			count = e.Series.Count
		}
		first := e.FirstTimestamp.Time
		if first.IsZero() {
			first = e.EventTime.Time
		}
		if count > 1 && !first.IsZero() {
			ageText = fmt.Sprintf("%s (x%d over %s)", ageText, count, age(first, now))
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		if e.Source.Host != "" {
			from += ", " + e.Source.Host
		}
		p.write(1, "%s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, ageText, from, strings.TrimSpace(e.Message))
	}
}

func controlledBy(m *api.ObjectMeta) string {
	if ref := api.ControllerRef(m); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

func (s *session) describePod(p *prefixWriter, pod *api.Pod) {
	p.meta(&pod.ObjectMeta, true)
	p.write(0, "Priority:\t0\n")
	if sa := pod.Spec.ServiceAccountName; sa != "" {
		p.write(0, "Service Account:\t%s\n", sa)
	}
	node := "<none>"
	if pod.Spec.NodeName != "" {
		node = pod.Spec.NodeName
		if pod.Status.HostIP != "" {
			node += "/" + pod.Status.HostIP
		}
	}
	p.write(0, "Node:\t%s\n", node)
	if pod.Status.StartTime != nil {
		p.write(0, "Start Time:\t%s\n", pod.Status.StartTime.Format(timeFormat))
	}
	p.labelsAndAnnotations(&pod.ObjectMeta)
	if pod.DeletionTimestamp != nil {
		p.write(0, "Status:\tTerminating (lasts %s)\n", humanDuration(s.env.Now().Sub(pod.DeletionTimestamp.Time)))
		if pod.DeletionGracePeriodSeconds != nil {
			p.write(0, "Termination Grace Period:\t%ds\n", *pod.DeletionGracePeriodSeconds)
		}
	} else {
		p.write(0, "Status:\t%s\n", orNone(pod.Status.Phase))
	}
	if pod.Status.Reason != "" {
		p.write(0, "Reason:\t%s\n", pod.Status.Reason)
	}
	if pod.Status.Message != "" {
		p.write(0, "Message:\t%s\n", pod.Status.Message)
	}
	p.write(0, "IP:\t%s\n", pod.Status.PodIP)
	if len(pod.Status.PodIPs) == 0 {
		p.write(0, "IPs:\t<none>\n")
	} else {
		p.write(0, "IPs:\n")
		for _, ip := range pod.Status.PodIPs {
			p.write(1, "IP:\t%s\n", ip.IP)
		}
	}
	if c := controlledBy(&pod.ObjectMeta); c != "" {
		p.write(0, "Controlled By:\t%s\n", c)
	}
	if len(pod.Spec.InitContainers) > 0 {
		p.write(0, "Init Containers:\n")
		for _, c := range pod.Spec.InitContainers {
			describeContainer(p, c, containerStatus(pod.Status.InitContainerStatuses, c.Name), true, "")
		}
	}
	p.write(0, "Containers:\n")
	for _, c := range pod.Spec.Containers {
		describeContainer(p, c, containerStatus(pod.Status.ContainerStatuses, c.Name), true, "")
	}
	if len(pod.Status.Conditions) > 0 {
		p.write(0, "Conditions:\n")
		p.write(1, "Type\tStatus\n")
		for _, c := range pod.Status.Conditions {
			p.write(1, "%v \t%v \n", c.Type, c.Status)
		}
	}
	describeVolumes(p, pod.Spec.Volumes, 0)
	qos := pod.Status.QOSClass
	if qos == "" {
		qos = "BestEffort"
	}
	p.write(0, "QoS Class:\t%s\n", qos)
	p.writeMap(0, "Node-Selectors", pod.Spec.NodeSelector, "=", nil)
	var tols []string
	for _, t := range pod.Spec.Tolerations {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		} else if t.Operator == "Exists" && t.Key != "" {
			s += ":" + t.Effect
			tols = append(tols, strings.TrimSuffix(s, ":"))
			continue
		}
		if t.Effect != "" {
			s += ":" + t.Effect
		}
		if t.TolerationSeconds != nil {
			s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
		}
		tols = append(tols, s)
	}
	if len(tols) == 0 {
		p.write(0, "Tolerations:\t<none>\n")
	} else {
		for i, t := range tols {
			if i == 0 {
				p.write(0, "Tolerations:\t%s\n", t)
			} else {
				p.write(0, "\t%s\n", t)
			}
		}
	}
}

func containerStatus(ss []api.ContainerStatus, name string) *api.ContainerStatus {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

func describeState(p *prefixWriter, title string, st api.ContainerState) {
	switch {
	case st.Running != nil:
		p.write(2, "%s:\tRunning\n", title)
		p.write(3, "Started:\t%s\n", st.Running.StartedAt.Format(timeFormat))
	case st.Waiting != nil:
		p.write(2, "%s:\tWaiting\n", title)
		if st.Waiting.Reason != "" {
			p.write(3, "Reason:\t%s\n", st.Waiting.Reason)
		}
		if st.Waiting.Message != "" {
			p.write(3, "Message:\t%s\n", st.Waiting.Message)
		}
	case st.Terminated != nil:
		p.write(2, "%s:\tTerminated\n", title)
		if st.Terminated.Reason != "" {
			p.write(3, "Reason:\t%s\n", st.Terminated.Reason)
		}
		if st.Terminated.Message != "" {
			p.write(3, "Message:\t%s\n", st.Terminated.Message)
		}
		p.write(3, "Exit Code:\t%d\n", st.Terminated.ExitCode)
		if st.Terminated.Signal > 0 {
			p.write(3, "Signal:\t%d\n", st.Terminated.Signal)
		}
		p.write(3, "Started:\t%s\n", st.Terminated.StartedAt.Format(timeFormat))
		p.write(3, "Finished:\t%s\n", st.Terminated.FinishedAt.Format(timeFormat))
	default:
		p.write(2, "%s:\tWaiting\n", title)
	}
}

// probeText is kubectl's one-line probe description.
func probeText(pr *api.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds #success=%d #failure=%d",
		pr.InitialDelaySeconds, pr.TimeoutSeconds, pr.PeriodSeconds, pr.SuccessThreshold, pr.FailureThreshold)
	switch {
	case pr.Exec != nil:
		return fmt.Sprintf("exec %v %s", pr.Exec.Command, attrs)
	case pr.HTTPGet != nil:
		scheme := strings.ToLower(pr.HTTPGet.Scheme)
		if scheme == "" {
			scheme = "http"
		}
		return fmt.Sprintf("http-get %s://%s:%s%s %s", scheme, pr.HTTPGet.Host, pr.HTTPGet.Port.String(), pr.HTTPGet.Path, attrs)
	case pr.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", pr.TCPSocket.Host, pr.TCPSocket.Port.String(), attrs)
	case pr.GRPC != nil:
		return fmt.Sprintf("grpc <pod>:%d %s", pr.GRPC.Port, attrs)
	}
	return "unknown " + attrs
}

func describeContainer(p *prefixWriter, c api.Container, st *api.ContainerStatus, withStatus bool, namePad string) {
	p.write(1, "%s%s:\n", namePad, c.Name)
	if st != nil && st.ContainerID != "" {
		p.write(2, "Container ID:\t%s\n", st.ContainerID)
	}
	p.write(2, "Image:\t%s\n", c.Image)
	if st != nil {
		p.write(2, "Image ID:\t%s\n", st.ImageID)
	}
	if len(c.Ports) == 0 {
		p.write(2, "Port:\t<none>\n")
		p.write(2, "Host Port:\t<none>\n")
	} else {
		var ports, hostPorts []string
		for _, cp := range c.Ports {
			proto := string(cp.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			port := fmt.Sprintf("%d/%s", cp.ContainerPort, proto)
			if cp.Name != "" {
				port += " (" + cp.Name + ")"
			}
			ports = append(ports, port)
			hostPorts = append(hostPorts, fmt.Sprintf("%d/%s", cp.HostPort, proto))
		}
		p.write(2, "Port%s:\t%s\n", plural(len(ports), "", "s"), strings.Join(ports, ", "))
		p.write(2, "Host Port%s:\t%s\n", plural(len(ports), "", "s"), strings.Join(hostPorts, ", "))
	}
	for _, l := range []struct {
		title string
		vals  []string
	}{{"Command", c.Command}, {"Args", c.Args}} {
		if len(l.vals) == 0 {
			continue
		}
		p.write(2, "%s:\n", l.title)
		for _, v := range l.vals {
			for _, line := range strings.Split(v, "\n") {
				p.write(3, "%s\n", line)
			}
		}
	}
	if withStatus && st != nil {
		describeState(p, "State", st.State)
		if st.LastState.Running != nil || st.LastState.Waiting != nil || st.LastState.Terminated != nil {
			describeState(p, "Last State", st.LastState)
		}
		p.write(2, "Ready:\t%s\n", goBool(st.Ready))
		p.write(2, "Restart Count:\t%d\n", st.RestartCount)
	}
	for _, l := range []struct {
		title string
		rl    api.ResourceList
	}{{"Limits", c.Resources.Limits}, {"Requests", c.Resources.Requests}} {
		if len(l.rl) == 0 {
			continue
		}
		p.write(2, "%s:\n", l.title)
		for _, k := range sortedKeys(l.rl) {
			p.write(3, "%s:\t%s\n", k, string(l.rl[k]))
		}
	}
	for _, pr := range []struct {
		title string
		probe *api.Probe
	}{{"Liveness", c.LivenessProbe}, {"Readiness", c.ReadinessProbe}, {"Startup", c.StartupProbe}} {
		if pr.probe != nil {
			p.write(2, "%s:\t%s\n", pr.title, probeText(pr.probe))
		}
	}
	if len(c.Env) == 0 {
		p.write(2, "Environment:\t<none>\n")
	} else {
		p.write(2, "Environment:\n")
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				p.write(3, "%s:\t%s\n", e.Name, e.Value)
			case e.ValueFrom.FieldRef != nil:
				p.write(3, "%s:\t (%s:%s)\n", e.Name, e.ValueFrom.FieldRef.APIVersion, e.ValueFrom.FieldRef.FieldPath)
			case e.ValueFrom.ResourceFieldRef != nil:
				p.write(3, "%s:\t%s (%s)\n", e.Name, e.ValueFrom.ResourceFieldRef.ContainerName, e.ValueFrom.ResourceFieldRef.Resource)
			case e.ValueFrom.SecretKeyRef != nil:
				p.write(3, "%s:\t<set to the key '%s' in secret '%s'>\n", e.Name, e.ValueFrom.SecretKeyRef.Key, e.ValueFrom.SecretKeyRef.Name)
			case e.ValueFrom.ConfigMapKeyRef != nil:
				p.write(3, "%s:\t<set to the key '%s' of config map '%s'>\n", e.Name, e.ValueFrom.ConfigMapKeyRef.Key, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	if len(c.VolumeMounts) == 0 {
		p.write(2, "Mounts:\t<none>\n")
	} else {
		p.write(2, "Mounts:\n")
		for _, m := range c.VolumeMounts {
			mode := "rw"
			if m.ReadOnly {
				mode = "ro"
			}
			p.write(3, "%s from %s (%s)\n", m.MountPath, m.Name, mode)
		}
	}
}

func describeVolumes(p *prefixWriter, vols []api.Volume, level int) {
	if len(vols) == 0 {
		p.write(level, "Volumes:\t<none>\n")
		return
	}
	p.write(level, "Volumes:\n")
	for _, v := range vols {
		p.write(level+1, "%s:\n", v.Name)
		switch {
		case v.HostPath != nil:
			p.write(level+2, "Type:\tHostPath (bare host directory volume)\n")
			p.write(level+2, "Path:\t%s\n", v.HostPath.Path)
		case v.EmptyDir != nil:
			p.write(level+2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n")
			p.write(level+2, "Medium:\t%s\n", v.EmptyDir.Medium)
		case v.Secret != nil:
			p.write(level+2, "Type:\tSecret (a volume populated by a Secret)\n")
			p.write(level+2, "SecretName:\t%s\n", v.Secret.SecretName)
		case v.ConfigMap != nil:
			p.write(level+2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n")
			p.write(level+2, "Name:\t%s\n", v.ConfigMap.Name)
		case v.DownwardAPI != nil:
			p.write(level+2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n")
			p.write(level+2, "Items:\n")
			for _, it := range v.DownwardAPI.Items {
				switch {
				case it.FieldRef != nil:
					p.write(level+3, "%s -> %s\n", it.FieldRef.FieldPath, it.Path)
				case it.ResourceFieldRef != nil:
					p.write(level+3, "%s -> %s\n", it.ResourceFieldRef.Resource, it.Path)
				}
			}
		case v.Projected != nil:
			// As kubectl's printProjectedVolumeSource.
			p.write(level+2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, src := range v.Projected.Sources {
				switch {
				case src.Secret != nil:
					p.write(level+2, "SecretName:\t%s\n", src.Secret.Name)
					p.write(level+2, "SecretOptionalName:\t%s\n", optionalString(src.Secret.Optional))
				case src.DownwardAPI != nil:
					p.write(level+2, "DownwardAPI:\ttrue\n")
				case src.ConfigMap != nil:
					p.write(level+2, "ConfigMapName:\t%s\n", src.ConfigMap.Name)
					p.write(level+2, "ConfigMapOptional:\t%s\n", optionalString(src.ConfigMap.Optional))
				case src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds != nil:
					p.write(level+2, "TokenExpirationSeconds:\t%d\n", *src.ServiceAccountToken.ExpirationSeconds)
				}
			}
		}
	}
}

// optionalString prints an optional flag as kubectl does (<nil> when unset).
func optionalString(b *bool) string {
	if b == nil {
		return "<nil>"
	}
	return fmt.Sprint(*b)
}

// sliceEndpointsFor renders the ready endpoints of a Service port from
// its slices: ip:targetPort, at most 3 then "+ N more...".
func sliceEndpointsFor(slices []api.EndpointSlice, sp api.ServicePort) string {
	const limit = 3
	var list []string
	count := 0
	more := false
	for _, sl := range slices {
		var port *int32
		for _, ep := range sl.Ports {
			name := ""
			if ep.Name != nil {
				name = *ep.Name
			}
			if name == sp.Name {
				port = ep.Port
				break
			}
		}
		if port == nil {
			continue
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				hp := fmt.Sprintf("%s:%d", a, *port)
				if strings.Contains(a, ":") {
					hp = fmt.Sprintf("[%s]:%d", a, *port)
				}
				if len(list) < limit {
					list = append(list, hp)
				} else {
					more = true
				}
				count++
			}
		}
	}
	if len(list) == 0 {
		return "<none>"
	}
	return listWithMore(list, more, count, limit)
}

func (s *session) describeService(ctx context.Context, p *prefixWriter, svc *api.Service) {
	p.meta(&svc.ObjectMeta, true)
	p.labelsAndAnnotations(&svc.ObjectMeta)
	p.writeMap(0, "Selector", svc.Spec.Selector, "=", nil)
	typ := svc.Spec.Type
	if typ == "" {
		typ = api.ServiceTypeClusterIP
	}
	p.write(0, "Type:\t%s\n", typ)
	if svc.Spec.IPFamilyPolicy != nil {
		p.write(0, "IP Family Policy:\t%s\n", *svc.Spec.IPFamilyPolicy)
	}
	if len(svc.Spec.IPFamilies) > 0 {
		p.write(0, "IP Families:\t%s\n", strings.Join(svc.Spec.IPFamilies, ","))
	} else if typ != api.ServiceTypeExternalName {
		p.write(0, "IP Families:\t<none>\n")
	}
	if typ != api.ServiceTypeExternalName {
		p.write(0, "IP:\t%s\n", orNone(svc.Spec.ClusterIP))
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 && svc.Spec.ClusterIP != "" {
			ips = []string{svc.Spec.ClusterIP}
		}
		p.write(0, "IPs:\t%s\n", orNone(strings.Join(ips, ",")))
	}
	if len(svc.Spec.ExternalIPs) > 0 {
		p.write(0, "External IPs:\t%s\n", strings.Join(svc.Spec.ExternalIPs, ","))
	}
	if svc.Spec.LoadBalancerIP != "" {
		p.write(0, "IP:\t%s\n", svc.Spec.LoadBalancerIP)
	}
	if typ == api.ServiceTypeLoadBalancer {
		var ing []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ing = append(ing, in.IP)
			} else if in.Hostname != "" {
				ing = append(ing, in.Hostname)
			}
		}
		p.write(0, "LoadBalancer Ingress:\t%s\n", strings.Join(ing, ", "))
	}
	if svc.Spec.ExternalName != "" {
		p.write(0, "External Name:\t%s\n", svc.Spec.ExternalName)
	}
	var slices []api.EndpointSlice
	if sliceInfo, err := s.resolve("endpointslices"); err == nil {
		var list api.EndpointSliceList
		if err := s.c.List(ctx, sliceInfo, svc.Namespace, client.ListOptions{LabelSelector: api.LabelServiceName + "=" + svc.Name}, &list); err == nil {
			slices = list.Items
		}
	}
	for _, sp := range svc.Spec.Ports {
		proto := string(sp.Protocol)
		if proto == "" {
			proto = "TCP"
		}
		p.write(0, "Port:\t%s\t%d/%s\n", unset(sp.Name), sp.Port, proto)
		tp := sp.TargetPort.String()
		if sp.TargetPort.IsZero() {
			tp = strconv.Itoa(int(sp.Port))
		}
		p.write(0, "TargetPort:\t%s/%s\n", tp, proto)
		if sp.NodePort != 0 {
			p.write(0, "NodePort:\t%s\t%d/%s\n", unset(sp.Name), sp.NodePort, proto)
		}
		if len(svc.Spec.Selector) > 0 || len(slices) > 0 {
			p.write(0, "Endpoints:\t%s\n", sliceEndpointsFor(slices, sp))
		} else {
			p.write(0, "Endpoints:\t\n")
		}
	}
	affinity := svc.Spec.SessionAffinity
	if affinity == "" {
		affinity = api.ServiceAffinityNone
	}
	p.write(0, "Session Affinity:\t%s\n", affinity)
	if svc.Spec.SessionAffinityConfig != nil && svc.Spec.SessionAffinityConfig.ClientIP != nil && svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != nil {
		p.write(0, "Session Affinity Timeout:\t%ds\n", *svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds)
	}
	if typ == api.ServiceTypeNodePort || typ == api.ServiceTypeLoadBalancer {
		etp := svc.Spec.ExternalTrafficPolicy
		if etp == "" {
			etp = api.ServiceTrafficPolicyCluster
		}
		p.write(0, "External Traffic Policy:\t%s\n", etp)
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		p.write(0, "HealthCheck NodePort:\t%d\n", svc.Spec.HealthCheckNodePort)
	}
	if svc.Spec.InternalTrafficPolicy != nil {
		p.write(0, "Internal Traffic Policy:\t%s\n", *svc.Spec.InternalTrafficPolicy)
	}
	if svc.Spec.PublishNotReadyAddresses {
		p.write(0, "Publish Not Ready Addresses:\ttrue\n")
	}
}

func describeTemplate(p *prefixWriter, t *api.PodTemplateSpec) {
	p.write(0, "Pod Template:\n")
	p.writeMap(1, "Labels", t.Labels, "=", nil)
	if len(t.Annotations) > 0 {
		p.writeMap(1, "Annotations", t.Annotations, ": ", nil)
	}
	if len(t.Spec.InitContainers) > 0 {
		p.write(1, "Init Containers:\n")
		for _, c := range t.Spec.InitContainers {
			describeContainer(p, c, nil, false, " ")
		}
	}
	p.write(1, "Containers:\n")
	for _, c := range t.Spec.Containers {
		describeContainer(p, c, nil, false, " ")
	}
	describeVolumes(p, t.Spec.Volumes, 1)
	if len(t.Spec.NodeSelector) > 0 {
		p.writeMap(1, "Node-Selectors", t.Spec.NodeSelector, "=", nil)
	}
}

// podsOf lists the pods a selector picks.
func (s *session) podsOf(ctx context.Context, ns string, sel *api.LabelSelector) []api.Pod {
	podInfo, err := s.resolve("pods")
	if err != nil || sel == nil {
		return nil
	}
	var list api.PodList
	if err := s.c.List(ctx, podInfo, ns, client.ListOptions{LabelSelector: api.SelectorString(sel)}, &list); err != nil {
		return nil
	}
	return list.Items
}

func (s *session) describeDeployment(ctx context.Context, p *prefixWriter, d *api.Deployment) {
	p.meta(&d.ObjectMeta, true)
	p.write(0, "CreationTimestamp:\t%s\n", d.CreationTimestamp.Format(timeFormat))
	p.labelsAndAnnotations(&d.ObjectMeta)
	p.write(0, "Selector:\t%s\n", orNone(api.SelectorString(d.Spec.Selector)))
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	p.write(0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n",
		desired, d.Status.UpdatedReplicas, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas)
	strategy := d.Spec.Strategy.Type
	if strategy == "" {
		strategy = api.RollingUpdateDeploymentStrategyType
	}
	p.write(0, "StrategyType:\t%s\n", strategy)
	p.write(0, "MinReadySeconds:\t%d\n", d.Spec.MinReadySeconds)
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && strategy == api.RollingUpdateDeploymentStrategyType {
		mu, ms := "25%", "25%"
		if ru.MaxUnavailable != nil {
			mu = ru.MaxUnavailable.String()
		}
		if ru.MaxSurge != nil {
			ms = ru.MaxSurge.String()
		}
		p.write(0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", mu, ms)
	}
	describeTemplate(p, &d.Spec.Template)
	if len(d.Status.Conditions) > 0 {
		p.write(0, "Conditions:\n")
		p.write(1, "Type\tStatus\tReason\n")
		p.write(1, "----\t------\t------\n")
		for _, c := range d.Status.Conditions {
			p.write(1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
		}
	}
	// As kubectl: every old ReplicaSet and the new one (the template's),
	// "name (status/spec replicas created)".
	rss, err := deploymentReplicaSets(ctx, s, d)
	if err != nil {
		return
	}
	var newRS *api.ReplicaSet
	for _, rs := range rss {
		a, _ := json.Marshal(templateWithoutHash(rs.Spec.Template))
		b, _ := json.Marshal(d.Spec.Template)
		if string(a) == string(b) {
			newRS = rs
			break
		}
	}
	created := func(rs *api.ReplicaSet) string {
		want := int32(1)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		return fmt.Sprintf("%s (%d/%d replicas created)", rs.Name, rs.Status.Replicas, want)
	}
	var old []string
	for _, rs := range rss {
		if rs != newRS {
			old = append(old, created(rs))
		}
	}
	p.write(0, "OldReplicaSets:\t%s\n", orNone(strings.Join(old, ", ")))
	if newRS != nil {
		p.write(0, "NewReplicaSet:\t%s\n", created(newRS))
	} else {
		p.write(0, "NewReplicaSet:\t<none>\n")
	}
}

func (s *session) describeStatefulSet(ctx context.Context, p *prefixWriter, st *api.StatefulSet) {
	p.meta(&st.ObjectMeta, true)
	p.write(0, "CreationTimestamp:\t%s\n", st.CreationTimestamp.Format(timeFormat))
	p.write(0, "Selector:\t%s\n", orNone(api.SelectorString(st.Spec.Selector)))
	p.labelsAndAnnotations(&st.ObjectMeta)
	desired := int32(1)
	if st.Spec.Replicas != nil {
		desired = *st.Spec.Replicas
	}
	p.write(0, "Replicas:\t%d desired | %d total\n", desired, st.Status.Replicas)
	strategy := st.Spec.UpdateStrategy.Type
	if strategy == "" {
		strategy = api.RollingUpdateStatefulSetStrategyType
	}
	p.write(0, "Update Strategy:\t%s\n", strategy)
	if ru := st.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		p.write(1, "Partition:\t%d\n", *ru.Partition)
	}
	var running, waiting, succeeded, failed int
	for _, pod := range s.podsOf(ctx, st.Namespace, st.Spec.Selector) {
		switch pod.Status.Phase {
		case api.PodRunning:
			running++
		case api.PodSucceeded:
			succeeded++
		case api.PodFailed:
			failed++
		default:
			waiting++
		}
	}
	p.write(0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	describeTemplate(p, &st.Spec.Template)
	if st.Spec.ServiceName != "" {
		p.write(0, "Service Name:\t%s\n", st.Spec.ServiceName)
	}
}

func describeEndpointSlice(p *prefixWriter, sl *api.EndpointSlice) {
	p.meta(&sl.ObjectMeta, true)
	p.labelsAndAnnotations(&sl.ObjectMeta)
	p.write(0, "AddressType:\t%s\n", sl.AddressType)
	if len(sl.Ports) == 0 {
		p.write(0, "Ports:\t<unset>\n")
	} else {
		p.write(0, "Ports:\n")
		p.write(1, "Name\tPort\tProtocol\n")
		p.write(1, "----\t----\t--------\n")
		for _, port := range sl.Ports {
			name, num, proto := "<unset>", "<unset>", "<unset>"
			if port.Name != nil && *port.Name != "" {
				name = *port.Name
			}
			if port.Port != nil {
				num = strconv.Itoa(int(*port.Port))
			}
			if port.Protocol != nil {
				proto = string(*port.Protocol)
			}
			p.write(1, "%s\t%s\t%s\n", name, num, proto)
		}
	}
	if len(sl.Endpoints) == 0 {
		p.write(0, "Endpoints:\t<none>\n")
	} else {
		p.write(0, "Endpoints:\n")
		boolText := func(b *bool) string {
			if b == nil {
				return "<unset>"
			}
			return strconv.FormatBool(*b)
		}
		for _, e := range sl.Endpoints {
			p.write(1, "- Addresses:\t%s\n", strings.Join(e.Addresses, ","))
			p.write(2, "Conditions:\n")
			p.write(3, "Ready:\t%s\n", boolText(e.Conditions.Ready))
			if e.Conditions.Serving != nil {
				p.write(3, "Serving:\t%s\n", boolText(e.Conditions.Serving))
			}
			if e.Conditions.Terminating != nil {
				p.write(3, "Terminating:\t%s\n", boolText(e.Conditions.Terminating))
			}
			host := "<unset>"
			if e.Hostname != nil {
				host = *e.Hostname
			}
			p.write(2, "Hostname:\t%s\n", host)
			if e.TargetRef != nil {
				p.write(2, "TargetRef:\t%s/%s\n", e.TargetRef.Kind, e.TargetRef.Name)
			}
			node := "<unset>"
			if e.NodeName != nil {
				node = *e.NodeName
			}
			p.write(2, "NodeName:\t%s\n", node)
			zone := "<unset>"
			if e.Zone != nil {
				zone = *e.Zone
			}
			p.write(2, "Zone:\t%s\n", zone)
		}
	}
}

func (s *session) describeNode(ctx context.Context, p *prefixWriter, n *api.Node) {
	p.meta(&n.ObjectMeta, false)
	roles := strings.Join(printers.NodeRoles(n), ",")
	if roles == "" {
		roles = "<none>"
	}
	p.write(0, "Roles:\t%s\n", roles)
	p.labelsAndAnnotations(&n.ObjectMeta)
	p.write(0, "CreationTimestamp:\t%s\n", n.CreationTimestamp.Format(timeFormat))
	if len(n.Spec.Taints) == 0 {
		p.write(0, "Taints:\t<none>\n")
	}
	for i, t := range n.Spec.Taints {
		text := t.Key
		if t.Value != "" {
			text += "=" + t.Value
		}
		text += ":" + t.Effect
		if i == 0 {
			p.write(0, "Taints:\t%s\n", text)
		} else {
			p.write(0, "\t%s\n", text)
		}
	}
	p.write(0, "Unschedulable:\t%v\n", n.Spec.Unschedulable)
	if len(n.Status.Conditions) > 0 {
		p.write(0, "Conditions:\n")
		p.write(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
		p.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range n.Status.Conditions {
			p.write(1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
				c.LastHeartbeatTime.Format(timeFormat), c.LastTransitionTime.Format(timeFormat), c.Reason, c.Message)
		}
	}
	p.write(0, "Addresses:\n")
	for _, a := range n.Status.Addresses {
		p.write(1, "%s:\t%s\n", a.Type, a.Address)
	}
	for _, rl := range []struct {
		title string
		l     api.ResourceList
	}{{"Capacity", n.Status.Capacity}, {"Allocatable", n.Status.Allocatable}} {
		if len(rl.l) == 0 {
			continue
		}
		p.write(0, "%s:\n", rl.title)
		for _, k := range sortedKeys(rl.l) {
			p.write(1, "%s:\t%s\n", k, string(rl.l[k]))
		}
	}
	ni := n.Status.NodeInfo
	p.write(0, "System Info:\n")
	p.write(1, "Machine ID:\t%s\n", ni.MachineID)
	p.write(1, "System UUID:\t%s\n", ni.SystemUUID)
	p.write(1, "Boot ID:\t%s\n", ni.BootID)
	p.write(1, "Kernel Version:\t%s\n", ni.KernelVersion)
	p.write(1, "OS Image:\t%s\n", ni.OSImage)
	p.write(1, "Operating System:\t%s\n", ni.OperatingSystem)
	p.write(1, "Architecture:\t%s\n", ni.Architecture)
	p.write(1, "Container Runtime Version:\t%s\n", ni.ContainerRuntimeVersion)
	p.write(1, "Kubelet Version:\t%s\n", ni.KubeletVersion)
	if n.Spec.PodCIDR != "" {
		p.write(0, "PodCIDR:\t%s\n", n.Spec.PodCIDR)
	}
	if len(n.Spec.PodCIDRs) > 0 {
		p.write(0, "PodCIDRs:\t%s\n", strings.Join(n.Spec.PodCIDRs, ","))
	}
	podInfo, err := s.resolve("pods")
	if err != nil {
		return
	}
	var list api.PodList
	if err := s.c.List(ctx, podInfo, "", client.ListOptions{FieldSelector: "spec.nodeName=" + n.Name}, &list); err != nil {
		return
	}
	var pods []api.Pod
	for _, pod := range list.Items {
		if pod.Status.Phase != api.PodSucceeded && pod.Status.Phase != api.PodFailed {
			pods = append(pods, pod)
		}
	}
	p.write(0, "Non-terminated Pods:\t(%d in total)\n", len(pods))
	if len(pods) > 0 {
		p.write(1, "Namespace\tName\tAge\n")
		p.write(1, "---------\t----\t---\n")
		now := s.env.Now()
		for _, pod := range pods {
			p.write(1, "%s\t%s\t%s\n", pod.Namespace, pod.Name, age(pod.CreationTimestamp.Time, now))
		}
	}
}

// describeUnstructured writes the fields of an object other than its
// identity, as kubectl's generic describer does.
func describeUnstructured(p *prefixWriter, m map[string]any) {
	for _, k := range sortedKeys(m) {
		if k == "apiVersion" || k == "kind" || k == "metadata" {
			continue
		}
		describeValue(p, 0, smartLabel(k), m[k])
	}
}

func describeValue(p *prefixWriter, level int, label string, v any) {
	switch x := v.(type) {
	case map[string]any:
		p.write(level, "%s:\n", label)
		for _, k := range sortedKeys(x) {
			describeValue(p, level+1, smartLabel(k), x[k])
		}
	case []any:
		p.write(level, "%s:\n", label)
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				first := true
				for _, k := range sortedKeys(m) {
					prefix := "  "
					if first {
						prefix = "- "
						first = false
					}
					if _, scalar := m[k].(map[string]any); !scalar {
						if _, list := m[k].([]any); !list {
							p.write(level+1, "%s%s:\t%s\n", prefix, smartLabel(k), cellText(m[k]))
							continue
						}
					}
					describeValue(p, level+2, prefix+smartLabel(k), m[k])
				}
				continue
			}
			p.write(level+1, "%s\n", cellText(e))
		}
	default:
		p.write(level, "%s:\t%s\n", label, cellText(v))
	}
}

// smartLabel turns a camelCase field name into kubectl's "Title Case"
// label (clusterIP -> Cluster IP).
func smartLabel(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		if i == 0 {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		// a new word: after a lower-case letter, or the last capital of an
		// acronym followed by a word (IPAddress), but not by a plural s
		// (podCIDRs)
		pluralS := i+2 == len(runes) && runes[i+1] == 's'
		if unicode.IsUpper(r) && (unicode.IsLower(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]) && !pluralS)) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// goBool prints b as kubectl describe does (Go's %t, capitalised): True or False.
func goBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
