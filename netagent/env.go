package netagent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// envContext is what the downward API reads besides the pod.
type envContext struct {
	podIP    netip.Addr
	hostIPs  []netip.Addr
	nodeName string
	// serviceEnv are the variables of the kubernetes Service
	// (serviceEnvVars), "NAME=value".
	serviceEnv []string
}

// serviceEnvVars is the kubelet's FromServices for one Service:
// <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT (the first port),
// <NAME>_SERVICE_PORT_<PORT NAME> for named ports, and the Docker link
// variables <NAME>_PORT, <NAME>_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}.
// A Service without a ClusterIP (or None) or ports has none.
func serviceEnvVars(svc *api.Service) []string {
	ip := svc.Spec.ClusterIP
	if ip == "" || ip == "None" || len(svc.Spec.Ports) == 0 {
		return nil
	}
	envName := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	prefix := envName(svc.Name)
	out := []string{prefix + "_SERVICE_HOST=" + ip, fmt.Sprintf("%s_SERVICE_PORT=%d", prefix, svc.Spec.Ports[0].Port)}
	for _, sp := range svc.Spec.Ports {
		if sp.Name != "" {
			out = append(out, fmt.Sprintf("%s_SERVICE_PORT_%s=%d", prefix, envName(sp.Name), sp.Port))
		}
	}
	for i, sp := range svc.Spec.Ports {
		proto := string(sp.Protocol)
		if proto == "" {
			proto = "TCP"
		}
		hp := net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))
		url := strings.ToLower(proto) + "://" + hp
		if i == 0 {
			out = append(out, prefix+"_PORT="+url)
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(proto))
		out = append(out, pp+"="+url, pp+"_PROTO="+strings.ToLower(proto), fmt.Sprintf("%s_PORT=%d", pp, sp.Port), pp+"_ADDR="+ip)
	}
	return out
}

// errEnvConfig marks a container whose env cannot be built (reason
// CreateContainerConfigError).
type errEnvConfig struct{ msg string }

func (e errEnvConfig) Error() string { return e.msg }

// objectSource reads the ConfigMaps and Secrets a pod references (in the
// pod's namespace). A missing object is an error for which
// isNotFound is true.
type objectSource interface {
	configMap(ctx context.Context, ns, name string) (*api.ConfigMap, error)
	secret(ctx context.Context, ns, name string) (*api.Secret, error)
}

// errObjectNotFound is objectSource's answer for a missing object; its
// text is the kubelet's ("configmap \"x\" not found").
type errObjectNotFound struct{ kind, name string }

func (e errObjectNotFound) Error() string { return fmt.Sprintf("%s %q not found", e.kind, e.name) }

func isNotFound(err error) bool {
	var nf errObjectNotFound
	return errors.As(err, &nf)
}

// envWarning is something the caller reports as a Warning Event (never a
// value: only key and object names).
type envWarning struct{ reason, msg string }

// containerEnv builds a container's environment ("NAME=value"; a later
// duplicate wins, as in Kubernetes): first envFrom, in order, then env, in
// spec order, resolving:
//
//   - envFrom: every key of the ConfigMap's data (not binaryData) or the
//     Secret's data, preceded by prefix. A key that is not a C-identifier
//     style name ([-._a-zA-Z][-._a-zA-Z0-9]*, the kubelet's IsEnvVarName)
//     is skipped with a warning InvalidEnvironmentVariableNames naming
//     the keys. A missing object fails the container unless optional.
//   - literal values, with $(VAR) references to earlier variables
//     expanded ($$ escapes a dollar; unknown references stay as they are);
//   - fieldRef: metadata.name, metadata.namespace, metadata.uid,
//     metadata.labels['k'], metadata.annotations['k'], spec.nodeName,
//     spec.serviceAccountName, status.podIP, status.podIPs, status.hostIP,
//     status.hostIPs;
//   - resourceFieldRef: limits/requests of cpu and memory (with divisor);
//     an unset limit reads as the node's capacity is not known here, so it
//     is left empty;
//   - configMapKeyRef and secretKeyRef: one key; a missing object or key
//     is skipped when optional, else it fails the container.
//
// Last come ec.serviceEnv (the kubernetes Service's KUBERNETES_SERVICE_HOST
// and the rest, as the kubelet adds them to every pod), each unless the
// container set that name; $(VAR) in env may refer to them.
//
// A failure is an errEnvConfig (reason CreateContainerConfigError) with
// the kubelet's message: `configmap "x" not found`, `couldn't find key k
// in ConfigMap ns/x`. Messages and warnings never hold a value.
func containerEnv(ctx context.Context, pod *api.Pod, c *api.Container, ec envContext, src objectSource) ([]string, []envWarning, error) {
	var names []string
	var warns []envWarning
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			names = append(names, k)
		}
		vals[k] = v
	}
	ns := pod.Namespace
	for _, ef := range c.EnvFrom {
		var data map[string]string
		var what, name string
		switch {
		case ef.ConfigMapRef != nil:
			what, name = "configMap", ef.ConfigMapRef.Name
			cm, err := src.configMap(ctx, ns, name)
			if err != nil {
				if isNotFound(err) && isTrue(ef.ConfigMapRef.Optional) {
					continue
				}
				return nil, warns, errEnvConfig{err.Error()}
			}
			data = cm.Data
		case ef.SecretRef != nil:
			what, name = "secret", ef.SecretRef.Name
			sec, err := src.secret(ctx, ns, name)
			if err != nil {
				if isNotFound(err) && isTrue(ef.SecretRef.Optional) {
					continue
				}
				return nil, warns, errEnvConfig{err.Error()}
			}
			data = make(map[string]string, len(sec.Data))
			for k, v := range sec.Data {
				data[k] = string(v)
			}
		default:
			continue
		}
		var invalid []string
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if ef.Prefix != "" {
				k2 := ef.Prefix + k
				if !isEnvVarName(k2) {
					invalid = append(invalid, k2)
					continue
				}
				set(k2, data[k])
				continue
			}
			if !isEnvVarName(k) {
				invalid = append(invalid, k)
				continue
			}
			set(k, data[k])
		}
		if len(invalid) > 0 {
			warns = append(warns, envWarning{"InvalidEnvironmentVariableNames", fmt.Sprintf(
				"Keys [%s] from the EnvFrom %s %s/%s were skipped since they are considered invalid environment variable names.",
				strings.Join(invalid, ", "), what, ns, name)})
		}
	}
	svcVals := map[string]string{}
	for _, kv := range ec.serviceEnv {
		k, v, _ := strings.Cut(kv, "=")
		svcVals[k] = v
	}
	// lookup is vals, then the Service variables (the kubelet's
	// MappingFuncFor(env, serviceEnv)).
	lookup := func() map[string]string {
		if len(svcVals) == 0 {
			return vals
		}
		m := maps.Clone(svcVals)
		maps.Copy(m, vals)
		return m
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expandRefs(e.Value, lookup()))
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			v, err := fieldRefValue(pod, vf.FieldRef.FieldPath, ec)
			if err != nil {
				return nil, warns, errEnvConfig{fmt.Sprintf("env %s: %v", e.Name, err)}
			}
			set(e.Name, v)
		case vf.ResourceFieldRef != nil:
			v, err := resourceFieldValue(pod, c, vf.ResourceFieldRef)
			if err != nil {
				return nil, warns, errEnvConfig{fmt.Sprintf("env %s: %v", e.Name, err)}
			}
			set(e.Name, v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			optional := isTrue(ref.Optional)
			cm, err := src.configMap(ctx, ns, ref.Name)
			if err != nil {
				if optional && isNotFound(err) {
					continue
				}
				return nil, warns, errEnvConfig{err.Error()}
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, warns, errEnvConfig{fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", ref.Key, ns, ref.Name)}
			}
			set(e.Name, v)
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			optional := isTrue(ref.Optional)
			sec, err := src.secret(ctx, ns, ref.Name)
			if err != nil {
				if optional && isNotFound(err) {
					continue
				}
				return nil, warns, errEnvConfig{err.Error()}
			}
			v, ok := sec.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, warns, errEnvConfig{fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, ns, ref.Name)}
			}
			set(e.Name, string(v))
		}
	}
	out := make([]string, 0, len(names)+len(ec.serviceEnv))
	for _, k := range names {
		out = append(out, k+"="+vals[k])
	}
	for _, kv := range ec.serviceEnv {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out, warns, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// isEnvVarName is the kubelet's IsEnvVarName: [-._a-zA-Z][-._a-zA-Z0-9]*.
func isEnvVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '.' || c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expandArgs expands $(VAR) in command and args with the container's env.
func expandArgs(in []string, env []string) []string {
	if len(in) == 0 {
		return nil
	}
	vals := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expandRefs(s, vals)
	}
	return out
}

// expandRefs replaces $(NAME) with vals[NAME] and $$ with $, as
// Kubernetes' expansion: unknown or malformed references are kept.
func expandRefs(s string, vals map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vals[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func joinAddrs(as []netip.Addr) string {
	ss := make([]string, len(as))
	for i, a := range as {
		ss[i] = a.String()
	}
	return strings.Join(ss, ",")
}

func fieldRefValue(pod *api.Pod, path string, ec envContext) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return ec.nodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		if ec.podIP.IsValid() {
			return ec.podIP.String(), nil
		}
		return "", nil
	case "status.podIPs":
		if ec.podIP.IsValid() {
			return ec.podIP.String(), nil
		}
		return "", nil
	case "status.hostIP":
		if len(ec.hostIPs) > 0 {
			return ec.hostIPs[0].String(), nil
		}
		return "", nil
	case "status.hostIPs":
		return joinAddrs(ec.hostIPs), nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses prefix['key'].
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func resourceFieldValue(pod *api.Pod, c *api.Container, ref *api.ResourceFieldSelector) (string, error) {
	target := c
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		target = nil
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == ref.ContainerName {
				target = &pod.Spec.Containers[i]
			}
		}
		if target == nil {
			return "", fmt.Errorf("no container %q", ref.ContainerName)
		}
	}
	kind, res, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") || (res != "cpu" && res != "memory") {
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	list := target.Resources.Limits
	if kind == "requests" {
		list = target.Resources.Requests
	}
	q, ok := list[res]
	if !ok {
		return "", nil
	}
	v, err := api.ParseQuantity(q)
	if err != nil {
		return "", err
	}
	div := big.NewRat(1, 1)
	if ref.Divisor != nil {
		d, err := api.ParseQuantity(*ref.Divisor)
		if err != nil || d.Sign() == 0 {
			return "", fmt.Errorf("bad divisor %q", *ref.Divisor)
		}
		div = d
	}
	r := new(big.Rat).Quo(v, div)
	// Rounded up, as the kubelet.
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if new(big.Rat).SetInt(n).Cmp(r) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.String(), nil
}
