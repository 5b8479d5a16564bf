package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// Limits on a pod's DNS configuration.
const (
	MaxDNSNameservers     = 3
	MaxDNSSearchPaths     = 32
	MaxDNSSearchListChars = 2048
)

var (
	supportedPortProtocols   = []string{string(ProtocolTCP), string(ProtocolUDP)}
	supportedRestartPolicies = []string{RestartPolicyAlways, RestartPolicyOnFailure, RestartPolicyNever}
	supportedDNSPolicies     = []string{DNSClusterFirstWithHostNet, DNSClusterFirst, DNSDefault, DNSNone}
	supportedPullPolicies    = []string{PullAlways, PullIfNotPresent, PullNever}
	supportedHTTPSchemes     = []string{URISchemeHTTP, URISchemeHTTPS}
	supportedHostPathTypes   = []string{"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"}
	supportedTaintEffects    = []string{TaintEffectNoSchedule, TaintEffectPreferNoSchedule, TaintEffectNoExecute}
	supportedTermMsgPolicies = []string{"File", "FallbackToLogsOnError"}
	// Downward API fields an environment variable may read.
	validEnvFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
		"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
	validResourceFieldRefs = []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"}
	configMapKeyRE         = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// ValidateProtocol checks a port protocol. SCTP is valid in Kubernetes but
// Skiff's data plane does not carry it, so it is rejected as NotSupported.
func ValidateProtocol(p Protocol, path *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if !slices.Contains(supportedPortProtocols, string(p)) {
		return field.ErrorList{field.NotSupported(path, string(p), supportedPortProtocols)}
	}
	return nil
}

// ValidatePortNumOrName checks a port given as a number (1..65535) or as
// an IANA service name (a named container port).
func ValidatePortNumOrName(port IntOrString, path *field.Path) field.ErrorList {
	if port.Type == String {
		return invalidEach(path, port.StrVal, ValidatePortName(port.StrVal))
	}
	return invalidEach(path, port.IntValue(), ValidatePortNum(port.IntValue()))
}

func validateEnum(v string, valid []string, path *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if !slices.Contains(valid, v) {
		return field.ErrorList{field.NotSupported(path, v, valid)}
	}
	return nil
}

// ValidatePod checks a new pod.
func ValidatePod(p *Pod) field.ErrorList {
	errs := ValidateObjectMeta(&p.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, ValidatePodSpec(&p.Spec, field.NewPath("spec"))...)
	errs = append(errs, validatePodIPs(p)...)
	return errs
}

// ValidatePodTemplateSpec checks a pod template (labels, annotations, spec).
func ValidatePodTemplateSpec(t *PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := ValidateLabels(t.Labels, path.Child("metadata", "labels"))
	errs = append(errs, ValidateAnnotations(t.Annotations, path.Child("metadata", "annotations"))...)
	errs = append(errs, ValidatePodSpec(&t.Spec, path.Child("spec"))...)
	return errs
}

// ValidatePodSpec checks a pod spec: volumes, containers (names unique
// across init and regular containers), policies, DNS and scheduling fields.
func ValidatePodSpec(s *PodSpec, path *field.Path) field.ErrorList {
	vols, errs := validateVolumes(s.Volumes, path.Child("volumes"))
	names := map[string]bool{}
	for i := range s.InitContainers {
		errs = append(errs, validateContainer(&s.InitContainers[i], true, vols, names, s.HostNetwork, path.Child("initContainers").Index(i))...)
	}
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	for i := range s.Containers {
		errs = append(errs, validateContainer(&s.Containers[i], false, vols, names, s.HostNetwork, path.Child("containers").Index(i))...)
	}
	errs = append(errs, validateEnum(s.RestartPolicy, supportedRestartPolicies, path.Child("restartPolicy"))...)
	errs = append(errs, validateEnum(s.DNSPolicy, supportedDNSPolicies, path.Child("dnsPolicy"))...)
	errs = append(errs, validatePodDNSConfig(s.DNSConfig, s.DNSPolicy, path.Child("dnsConfig"))...)
	errs = append(errs, ValidateLabels(s.NodeSelector, path.Child("nodeSelector"))...)
	if s.ServiceAccountName != "" {
		errs = append(errs, ValidateDNS1123SubdomainField(s.ServiceAccountName, path.Child("serviceAccountName"))...)
	}
	if s.NodeName != "" {
		errs = append(errs, ValidateDNS1123SubdomainField(s.NodeName, path.Child("nodeName"))...)
	}
	if s.SchedulerName != "" {
		errs = append(errs, ValidateDNS1123SubdomainField(s.SchedulerName, path.Child("schedulerName"))...)
	}
	if s.Hostname != "" {
		errs = append(errs, ValidateDNS1123LabelField(s.Hostname, path.Child("hostname"))...)
	}
	if s.Subdomain != "" {
		errs = append(errs, ValidateDNS1123LabelField(s.Subdomain, path.Child("subdomain"))...)
	}
	if s.ActiveDeadlineSeconds != nil {
		if v := *s.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), v, InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if s.TerminationGracePeriodSeconds != nil {
		errs = append(errs, ValidateNonnegativeField(*s.TerminationGracePeriodSeconds, path.Child("terminationGracePeriodSeconds"))...)
	}
	for i, ref := range s.ImagePullSecrets {
		if ref.Name == "" {
			errs = append(errs, field.Required(path.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	errs = append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
	errs = append(errs, validatePodSchedulingFields(s, path)...)
	for i, ha := range s.HostAliases {
		p := path.Child("hostAliases").Index(i)
		errs = append(errs, ValidateIP(p.Child("ip"), ha.IP)...)
		for j, h := range ha.Hostnames {
			errs = append(errs, ValidateDNS1123SubdomainField(h, p.Child("hostnames").Index(j))...)
		}
	}
	if sc := s.SecurityContext; sc != nil {
		p := path.Child("securityContext")
		for _, f := range []struct {
			name string
			v    *int64
		}{{"runAsUser", sc.RunAsUser}, {"runAsGroup", sc.RunAsGroup}, {"fsGroup", sc.FSGroup}} {
			if f.v != nil {
				errs = append(errs, ValidateNonnegativeField(*f.v, p.Child(f.name))...)
			}
		}
		for i, g := range sc.SupplementalGroups {
			errs = append(errs, ValidateNonnegativeField(g, p.Child("supplementalGroups").Index(i))...)
		}
		if fp := sc.FSGroupChangePolicy; fp != nil && *fp != FSGroupChangeOnRootMismatch && *fp != FSGroupChangeAlways {
			errs = append(errs, field.NotSupported(p.Child("fsGroupChangePolicy"), *fp, []string{string(FSGroupChangeAlways), string(FSGroupChangeOnRootMismatch)}))
		}
		errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
		errs = append(errs, validateSysctls(s, sc.Sysctls, p.Child("sysctls"))...)
	}
	return errs
}

// validateSeccompProfile is upstream's validateSeccompProfileField: a
// known type, and a localhostProfile (a relative path without "..")
// exactly when the type is Localhost.
func validateSeccompProfile(sp *SeccompProfile, path *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case SeccompProfileTypeLocalhost, SeccompProfileTypeRuntimeDefault, SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(path.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), sp.Type, []string{string(SeccompProfileTypeLocalhost), string(SeccompProfileTypeRuntimeDefault), string(SeccompProfileTypeUnconfined)}))
	}
	if sp.Type == SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil || *sp.LocalhostProfile == "" {
			errs = append(errs, field.Required(path.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, validateLocalNonReservedPath(*sp.LocalhostProfile, path.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(path.Child("localhostProfile"), *sp.LocalhostProfile, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

func validateVolumes(vols []Volume, path *field.Path) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, v := range vols {
		p := path.Index(i)
		var el field.ErrorList
		if v.Name == "" {
			el = append(el, field.Required(p.Child("name"), ""))
		} else {
			el = append(el, ValidateDNS1123LabelField(v.Name, p.Child("name"))...)
		}
		if names[v.Name] {
			el = append(el, field.Duplicate(p.Child("name"), v.Name))
		}
		el = append(el, validateVolumeSource(&v.VolumeSource, p)...)
		if len(el) == 0 {
			names[v.Name] = true
		}
		errs = append(errs, el...)
	}
	return names, errs
}

func validateVolumeSource(s *VolumeSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	more := func(name string) bool {
		n++
		if n > 1 {
			errs = append(errs, field.Forbidden(path.Child(name), "may not specify more than 1 volume type"))
			return false
		}
		return true
	}
	if s.HostPath != nil && more("hostPath") {
		p := path.Child("hostPath")
		if s.HostPath.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, validatePathNoBacksteps(s.HostPath.Path, p.Child("path"))...)
		}
		if s.HostPath.Type != nil && !slices.Contains(supportedHostPathTypes, *s.HostPath.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), *s.HostPath.Type, supportedHostPathTypes))
		}
	}
	if s.EmptyDir != nil && more("emptyDir") {
		if s.EmptyDir.SizeLimit != nil {
			errs = append(errs, validateQuantity(*s.EmptyDir.SizeLimit, path.Child("emptyDir", "sizeLimit"))...)
		}
	}
	if s.Secret != nil && more("secret") {
		p := path.Child("secret")
		if s.Secret.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		errs = append(errs, validateKeyToPaths(s.Secret.Items, s.Secret.DefaultMode, p)...)
	}
	if s.DownwardAPI != nil && more("downwardAPI") {
		p := path.Child("downwardAPI")
		if s.DownwardAPI.DefaultMode != nil {
			errs = append(errs, validateFileMode(*s.DownwardAPI.DefaultMode, p.Child("defaultMode"))...)
		}
		// Kubernetes names the volume, not the item, in an item's errors.
		for i := range s.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIVolumeFile(&s.DownwardAPI.Items[i], p)...)
		}
	}
	if s.ConfigMap != nil && more("configMap") {
		p := path.Child("configMap")
		if s.ConfigMap.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		errs = append(errs, validateKeyToPaths(s.ConfigMap.Items, s.ConfigMap.DefaultMode, p)...)
	}
	if s.Projected != nil && more("projected") {
		errs = append(errs, validateProjectedVolumeSource(s.Projected, path.Child("projected"))...)
	}
	if s.PersistentVolumeClaim != nil && more("persistentVolumeClaim") {
		if s.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(path.Child("persistentVolumeClaim", "claimName"), ""))
		}
	}
	if s.NFS != nil && more("nfs") {
		errs = append(errs, validateNFSVolumeSource(s.NFS, path.Child("nfs"))...)
	}
	if n == 0 {
		errs = append(errs, field.Required(path, "must specify a volume type"))
	}
	return errs
}

func validateKeyToPaths(items []KeyToPath, defaultMode *int32, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		p := path.Child("items").Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		}
		if it.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, validateLocalNonReservedPath(it.Path, p.Child("path"))...)
		}
		if it.Mode != nil {
			errs = append(errs, validateFileMode(*it.Mode, p.Child("mode"))...)
		}
	}
	if defaultMode != nil {
		errs = append(errs, validateFileMode(*defaultMode, path.Child("defaultMode"))...)
	}
	return errs
}

// validVolumeFieldPaths are the pod fields a downwardAPI file may read
// (besides metadata.labels['k'] and metadata.annotations['k']).
var validVolumeFieldPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}

// validateDownwardAPIVolumeFile is Kubernetes' check of one downwardAPI
// file: a local path, exactly one of fieldRef and resourceFieldRef (with
// a containerName), a mode.
func validateDownwardAPIVolumeFile(f *DownwardAPIVolumeFile, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(path.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, path.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelectorIn(f.FieldRef, validVolumeFieldPaths, path.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		p := path.Child("resourceFieldRef")
		if f.ResourceFieldRef.ContainerName == "" {
			errs = append(errs, field.Required(p.Child("containerName"), ""))
		}
		errs = append(errs, validateResourceFieldSelector(f.ResourceFieldRef, p)...)
	default:
		errs = append(errs, field.Required(path, "one of fieldRef and resourceFieldRef is required"))
	}
	if f.Mode != nil {
		errs = append(errs, validateFileMode(*f.Mode, path.Child("mode"))...)
	}
	return errs
}

// validateProjectedVolumeSource is Kubernetes' check of a projected
// volume: defaultMode, one kind per source, the paths of all sources
// distinct, a serviceAccountToken's expirationSeconds in [600, 2^32] and
// a local path.
func validateProjectedVolumeSource(pv *ProjectedVolumeSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pv.DefaultMode != nil {
		errs = append(errs, validateFileMode(*pv.DefaultMode, path.Child("defaultMode"))...)
	}
	paths := map[string]bool{}
	dup := func(p, what string) {
		if p == "" {
			return
		}
		if paths[p] {
			errs = append(errs, field.Invalid(path, what, "conflicting duplicate paths"))
		}
		paths[p] = true
	}
	for i, src := range pv.Sources {
		n := 0
		sp := path.Child("sources").Index(i)
		if src.Secret != nil {
			n++
			p := sp.Child("secret")
			if src.Secret.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			}
			errs = append(errs, validateKeyToPaths(src.Secret.Items, nil, p)...)
			for _, it := range src.Secret.Items {
				dup(it.Path, src.Secret.Name)
			}
		}
		if src.ConfigMap != nil {
			n++
			p := sp.Child("configMap")
			if src.ConfigMap.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			}
			errs = append(errs, validateKeyToPaths(src.ConfigMap.Items, nil, p)...)
			for _, it := range src.ConfigMap.Items {
				dup(it.Path, src.ConfigMap.Name)
			}
		}
		if src.DownwardAPI != nil {
			n++
			p := sp.Child("downwardAPI")
			for j := range src.DownwardAPI.Items {
				f := &src.DownwardAPI.Items[j]
				errs = append(errs, validateDownwardAPIVolumeFile(f, p)...)
				dup(f.Path, f.Path)
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			p := sp.Child("serviceAccountToken")
			var exp int64
			if t.ExpirationSeconds != nil {
				exp = *t.ExpirationSeconds
			}
			if exp < 10*60 {
				errs = append(errs, field.Invalid(p.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
			}
			if exp > 1<<32 {
				errs = append(errs, field.Invalid(p.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
			}
			// Kubernetes names the volume's path here, not the source's.
			if t.Path == "" {
				errs = append(errs, field.Required(path.Child("path"), ""))
			} else {
				errs = append(errs, validateLocalNonReservedPath(t.Path, path.Child("path"))...)
			}
			dup(t.Path, t.Path)
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

func validateFileMode(m int32, path *field.Path) field.ErrorList {
	if m < 0 || m > 0o777 {
		return field.ErrorList{field.Invalid(path, m, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func validatePathNoBacksteps(p string, path *field.Path) field.ErrorList {
	for _, item := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(path, p, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalNonReservedPath(p string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(path, p, "must be a relative path"))
	}
	errs = append(errs, validatePathNoBacksteps(p, path)...)
	if strings.HasPrefix(p, "..") {
		errs = append(errs, field.Invalid(path, p, "must not start with '..'"))
	}
	return errs
}

func validateContainer(c *Container, isInit bool, vols, names map[string]bool, hostNetwork bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, ValidateDNS1123LabelField(c.Name, path.Child("name"))...)
	}
	if c.Name != "" && names[c.Name] {
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	}
	names[c.Name] = true
	if c.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	} else if strings.TrimSpace(c.Image) != c.Image {
		errs = append(errs, field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, validateEnum(c.ImagePullPolicy, supportedPullPolicies, path.Child("imagePullPolicy"))...)
	if c.TerminationMessagePolicy != "" && !slices.Contains(supportedTermMsgPolicies, c.TerminationMessagePolicy) {
		errs = append(errs, field.NotSupported(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, supportedTermMsgPolicies))
	}
	sidecar := false
	if c.RestartPolicy != nil {
		if !isInit {
			errs = append(errs, field.Forbidden(path.Child("restartPolicy"), "may not be set for non-init containers"))
		} else if *c.RestartPolicy != RestartPolicyAlways {
			errs = append(errs, field.NotSupported(path.Child("restartPolicy"), *c.RestartPolicy, []string{RestartPolicyAlways}))
		} else {
			sidecar = true
		}
	}
	errs = append(errs, validateContainerPorts(c.Ports, hostNetwork, path.Child("ports"))...)
	errs = append(errs, ValidateEnvFrom(c.EnvFrom, path.Child("envFrom"))...)
	errs = append(errs, ValidateEnv(c.Env, path.Child("env"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, vols, path.Child("volumeMounts"))...)
	errs = append(errs, ValidateResourceRequirements(&c.Resources, path.Child("resources"))...)
	probes := []struct {
		name string
		p    *Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, pr := range probes {
		if pr.p == nil {
			continue
		}
		p := path.Child(pr.name)
		if isInit && !sidecar {
			errs = append(errs, field.Forbidden(p, "may not be set for init containers without restartPolicy=Always"))
			continue
		}
		errs = append(errs, ValidateProbe(pr.p, p)...)
		switch pr.name {
		case "livenessProbe", "startupProbe":
			if pr.p.SuccessThreshold != 1 {
				errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.p.SuccessThreshold, "must be 1"))
			}
		case "readinessProbe":
			if pr.p.TerminationGracePeriodSeconds != nil {
				errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *pr.p.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
			}
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []struct {
			name string
			h    *LifecycleHandler
		}{{"postStart", c.Lifecycle.PostStart}, {"preStop", c.Lifecycle.PreStop}} {
			if h.h != nil {
				errs = append(errs, validateHandler(ProbeHandler{Exec: h.h.Exec, HTTPGet: h.h.HTTPGet, TCPSocket: h.h.TCPSocket}, h.h.Sleep, path.Child("lifecycle", h.name))...)
			}
		}
	}
	if sc := c.SecurityContext; sc != nil {
		p := path.Child("securityContext")
		if sc.RunAsUser != nil {
			errs = append(errs, ValidateNonnegativeField(*sc.RunAsUser, p.Child("runAsUser"))...)
		}
		if sc.RunAsGroup != nil {
			errs = append(errs, ValidateNonnegativeField(*sc.RunAsGroup, p.Child("runAsGroup"))...)
		}
		if sc.Privileged != nil && *sc.Privileged && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
			errs = append(errs, field.Invalid(p, "", "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation && sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(p, "", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
		errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	}
	return errs
}

func validateContainerPorts(ports []ContainerPort, hostNetwork bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		p := path.Index(i)
		if port.Name != "" {
			if msgs := ValidatePortName(port.Name); len(msgs) != 0 {
				errs = append(errs, invalidEach(p.Child("name"), port.Name, msgs)...)
			} else if names[port.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				names[port.Name] = true
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(p.Child("containerPort"), ""))
		} else {
			errs = append(errs, invalidEach(p.Child("containerPort"), port.ContainerPort, ValidatePortNum(int(port.ContainerPort)))...)
		}
		if port.HostPort != 0 {
			errs = append(errs, invalidEach(p.Child("hostPort"), port.HostPort, ValidatePortNum(int(port.HostPort)))...)
			if hostNetwork && port.HostPort != port.ContainerPort {
				errs = append(errs, field.Invalid(p.Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
		if port.HostIP != "" {
			errs = append(errs, ValidateIP(p.Child("hostIP"), port.HostIP)...)
		}
		errs = append(errs, ValidateProtocol(port.Protocol, p.Child("protocol"))...)
	}
	return errs
}

// ValidateEnv checks environment variables: names, and that valueFrom
// names exactly one source and is not combined with value.
func ValidateEnv(vars []EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		p := path.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, invalidEach(p.Child("name"), ev.Name, ValidateEnvVarName(ev.Name))...)
		}
		errs = append(errs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return errs
}

// ValidateEnvFrom checks envFrom as Kubernetes does: a prefix, if any, is
// a valid environment variable name, and each entry names exactly one of
// configMapRef and secretRef, by a DNS subdomain name.
func ValidateEnvFrom(srcs []EnvFromSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, src := range srcs {
		p := path.Index(i)
		if src.Prefix != "" {
			errs = append(errs, invalidEach(p.Child("prefix"), src.Prefix, ValidateEnvVarName(src.Prefix))...)
		}
		n := 0
		if src.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(src.ConfigMapRef.Name, p.Child("configMapRef", "name"))...)
		}
		if src.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(src.SecretRef.Name, p.Child("secretRef", "name"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(path, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return invalidEach(path, name, NameIsDNSSubdomain(name, false))
}

func validateEnvVarValueFrom(ev EnvVar, path *field.Path) field.ErrorList {
	vf := ev.ValueFrom
	if vf == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if vf.FieldRef != nil {
		n++
		errs = append(errs, validateObjectFieldSelector(vf.FieldRef, path.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldSelector(vf.ResourceFieldRef, path.Child("resourceFieldRef"))...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, path.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, path.Child("secretKeyRef"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(path, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(path, "", "may not have more than one field specified at a time"))
	}
	return errs
}

func validateObjectFieldSelector(fs *ObjectFieldSelector, path *field.Path) field.ErrorList {
	return validateObjectFieldSelectorIn(fs, validEnvFieldPaths, path)
}

// validateObjectFieldSelectorIn checks a fieldRef against the paths valid
// where it is used (env or a downwardAPI file).
func validateObjectFieldSelectorIn(fs *ObjectFieldSelector, valid []string, path *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(path.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(path.Child("fieldPath"), "")}
	}
	if fs.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(path.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: unsupported version %q", fs.APIVersion))}
	}
	// metadata.labels['key'] and metadata.annotations['key'].
	if i := strings.Index(fs.FieldPath, "['"); i > 0 && strings.HasSuffix(fs.FieldPath, "']") {
		base, sub := fs.FieldPath[:i], fs.FieldPath[i+2:len(fs.FieldPath)-2]
		switch base {
		case "metadata.annotations":
			return invalidEach(path, strings.ToLower(sub), ValidateQualifiedName(strings.ToLower(sub)))
		case "metadata.labels":
			return invalidEach(path, sub, ValidateQualifiedName(sub))
		default:
			return field.ErrorList{field.Invalid(path, base, "does not support subscript")}
		}
	}
	if !slices.Contains(valid, fs.FieldPath) {
		return field.ErrorList{field.NotSupported(path.Child("fieldPath"), fs.FieldPath, valid)}
	}
	return nil
}

func validateResourceFieldSelector(rf *ResourceFieldSelector, p *field.Path) field.ErrorList {
	if rf.Resource == "" {
		return field.ErrorList{field.Required(p.Child("resource"), "")}
	}
	if !slices.Contains(validResourceFieldRefs, rf.Resource) {
		return field.ErrorList{field.NotSupported(p.Child("resource"), rf.Resource, validResourceFieldRefs)}
	}
	return nil
}

func validateKeySelector(name, key string, path *field.Path) field.ErrorList {
	errs := invalidEach(path.Child("name"), name, NameIsDNSSubdomain(name, false))
	if key == "" {
		errs = append(errs, field.Required(path.Child("key"), ""))
	} else {
		errs = append(errs, invalidEach(path.Child("key"), key, ValidateConfigMapKey(key))...)
	}
	return errs
}

// ValidateConfigMapKey checks a ConfigMap or Secret key.
func ValidateConfigMapKey(k string) []string {
	var errs []string
	if len(k) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !configMapKeyRE.MatchString(k) {
		errs = append(errs, RegexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name"))
	}
	switch {
	case k == ".":
		errs = append(errs, "must not be '.'")
	case k == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(k, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

func validateVolumeMounts(mounts []VolumeMount, vols map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, m := range mounts {
		p := path.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if !vols[m.Name] {
			errs = append(errs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(p.Child("mountPath"), ""))
		} else if seen[m.MountPath] {
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		seen[m.MountPath] = true
		if m.SubPath != "" {
			errs = append(errs, validateLocalNonReservedPath(m.SubPath, p.Child("subPath"))...)
		}
	}
	return errs
}

// Standard container resource names that need no domain prefix.
func isStandardContainerResource(name string) bool {
	switch name {
	case "cpu", "memory", "ephemeral-storage":
		return true
	}
	return strings.HasPrefix(name, "hugepages-")
}

func validateQuantity(q Quantity, path *field.Path) field.ErrorList {
	v, err := ParseQuantity(q)
	if err != nil {
		return field.ErrorList{field.Invalid(path, string(q), err.Error())}
	}
	if v.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, string(q), isNegativeErrorMsg)}
	}
	return nil
}

// ValidateResourceRequirements checks resource names and quantities, and
// that no request exceeds its limit.
func ValidateResourceRequirements(r *ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(list ResourceList, p *field.Path) {
		for _, name := range sortedKeys(list) {
			kp := p.Key(name)
			errs = append(errs, invalidEach(kp, name, ValidateQualifiedName(name))...)
			if !strings.Contains(name, "/") && !isStandardContainerResource(name) {
				errs = append(errs, field.Invalid(kp, name, "must be a standard resource for containers"))
			}
			errs = append(errs, validateQuantity(list[name], kp)...)
		}
	}
	check(r.Limits, path.Child("limits"))
	check(r.Requests, path.Child("requests"))
	for _, name := range sortedKeys(r.Requests) {
		lim, ok := r.Limits[name]
		if !ok {
			continue
		}
		rq, err1 := ParseQuantity(r.Requests[name])
		lq, err2 := ParseQuantity(lim)
		if err1 == nil && err2 == nil && rq.Cmp(lq) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(name), string(r.Requests[name]),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim)))
		}
	}
	return errs
}

// ValidateProbe checks a probe: exactly one handler, and non-negative
// timing fields (positive after defaulting).
func ValidateProbe(p *Probe, path *field.Path) field.ErrorList {
	errs := validateHandler(p.ProbeHandler, nil, path)
	errs = append(errs, ValidateNonnegativeField(int64(p.InitialDelaySeconds), path.Child("initialDelaySeconds"))...)
	errs = append(errs, ValidateNonnegativeField(int64(p.TimeoutSeconds), path.Child("timeoutSeconds"))...)
	errs = append(errs, ValidateNonnegativeField(int64(p.PeriodSeconds), path.Child("periodSeconds"))...)
	errs = append(errs, ValidateNonnegativeField(int64(p.SuccessThreshold), path.Child("successThreshold"))...)
	errs = append(errs, ValidateNonnegativeField(int64(p.FailureThreshold), path.Child("failureThreshold"))...)
	if p.TerminationGracePeriodSeconds != nil && *p.TerminationGracePeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *p.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return errs
}

func validateHandler(h ProbeHandler, sleep *SleepAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(name string) bool {
		if n > 0 {
			errs = append(errs, field.Forbidden(path.Child(name), "may not specify more than 1 handler type"))
			return false
		}
		n++
		return true
	}
	if h.Exec != nil && one("exec") {
		if len(h.Exec.Command) == 0 {
			errs = append(errs, field.Required(path.Child("exec", "command"), ""))
		}
	}
	if h.HTTPGet != nil && one("httpGet") {
		p := path.Child("httpGet")
		if h.HTTPGet.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		errs = append(errs, ValidatePortNumOrName(h.HTTPGet.Port, p.Child("port"))...)
		if !slices.Contains(supportedHTTPSchemes, h.HTTPGet.Scheme) {
			errs = append(errs, field.NotSupported(p.Child("scheme"), h.HTTPGet.Scheme, supportedHTTPSchemes))
		}
		for _, hd := range h.HTTPGet.HTTPHeaders {
			errs = append(errs, invalidEach(p.Child("httpHeaders"), hd.Name, ValidateHTTPHeaderName(hd.Name))...)
		}
	}
	if h.TCPSocket != nil && one("tcpSocket") {
		errs = append(errs, ValidatePortNumOrName(h.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if h.GRPC != nil && one("grpc") {
		errs = append(errs, invalidEach(path.Child("grpc", "port"), h.GRPC.Port, ValidatePortNum(int(h.GRPC.Port)))...)
	}
	if sleep != nil && one("sleep") {
		if sleep.Seconds < 0 {
			errs = append(errs, field.Invalid(path.Child("sleep", "seconds"), sleep.Seconds, isNegativeErrorMsg))
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(path, "must specify a handler type"))
	}
	return errs
}

func validatePodDNSConfig(c *PodDNSConfig, policy string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy == DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(path, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(path.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	if len(c.Nameservers) > MaxDNSNameservers {
		errs = append(errs, field.Invalid(path.Child("nameservers"), c.Nameservers, fmt.Sprintf("must not have more than %v nameservers", MaxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, ValidateIP(path.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > MaxDNSSearchPaths {
		errs = append(errs, field.Invalid(path.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v search paths", MaxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > MaxDNSSearchListChars {
		errs = append(errs, field.Invalid(path.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", MaxDNSSearchListChars)))
	}
	for i, s := range c.Searches {
		errs = append(errs, ValidateDNS1123SubdomainField(strings.TrimSuffix(s, "."), path.Child("searches").Index(i))...)
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(path.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

func validateTolerations(ts []Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != "Exists" {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case "Equal", "":
			errs = append(errs, invalidEach(p.Child("operator"), t.Value, ValidateLabelValue(t.Value))...)
		case "Exists":
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{"Equal", "Exists"}))
		}
		if t.Effect != "" && !slices.Contains(supportedTaintEffects, t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, supportedTaintEffects))
		}
	}
	return errs
}

func validatePodIPs(p *Pod) field.ErrorList {
	var errs field.ErrorList
	podIPs := field.NewPath("status", "podIPs")
	ips := make([]string, len(p.Status.PodIPs))
	for i, ip := range p.Status.PodIPs {
		errs = append(errs, ValidateIP(podIPs.Index(i), ip.IP)...)
		ips[i] = ip.IP
	}
	if len(errs) == 0 && len(ips) > 1 && !isDualStack(ips) {
		errs = append(errs, field.Invalid(podIPs, p.Status.PodIPs, "may specify no more than one IP for each IP family"))
	}
	hostIPs := field.NewPath("status", "hostIPs")
	hips := make([]string, len(p.Status.HostIPs))
	badHost := false
	for i, ip := range p.Status.HostIPs {
		if e := ValidateIP(hostIPs.Index(i), ip.IP); len(e) > 0 {
			badHost = true
			errs = append(errs, e...)
		}
		hips[i] = ip.IP
	}
	if !badHost && len(hips) > 1 && !isDualStack(hips) {
		errs = append(errs, field.Invalid(hostIPs, p.Status.HostIPs, "may specify no more than one IP for each IP family"))
	}
	if p.Status.PodIP != "" && len(p.Status.PodIPs) > 0 && p.Status.PodIPs[0].IP != p.Status.PodIP {
		errs = append(errs, field.Invalid(field.NewPath("status", "podIP"), p.Status.PodIP, "must match `podIPs[0].ip`"))
	}
	return errs
}

// isDualStack reports whether ips (CIDRs or IPs) are exactly one IPv4 and
// one IPv6 value.
func isDualStack(ips []string) bool {
	if len(ips) != 2 {
		return false
	}
	v6 := 0
	for _, s := range ips {
		if p, err := netip.ParsePrefix(s); err == nil {
			if p.Addr().Is6() {
				v6++
			}
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return false
		}
		if a.Is6() {
			v6++
		}
	}
	return v6 == 1
}

// updatablePodSpecFields is Kubernetes' wording of what a pod update may change.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// ValidatePodUpdate checks an update of a pod: the new pod must be valid,
// and its spec may change only in container images, activeDeadlineSeconds
// (set, or lowered) and added tolerations. (nodeName is set through the
// binding subresource, not by an update.)
func ValidatePodUpdate(p, old *Pod) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidatePodSpec(&p.Spec, field.NewPath("spec"))...)
	spec := field.NewPath("spec")
	for _, pair := range []struct {
		name     string
		new, old []Container
	}{{"containers", p.Spec.Containers, old.Spec.Containers}, {"initContainers", p.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(pair.new) != len(pair.old) {
			return append(errs, field.Forbidden(spec.Child(pair.name), "pod updates may not add or remove containers"))
		}
	}
	if p.Spec.ActiveDeadlineSeconds != nil {
		v := *p.Spec.ActiveDeadlineSeconds
		if old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < v {
			return append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), nil, "must not update from a positive integer to nil value"))
	}
	for i, t := range old.Spec.Tolerations {
		if !slices.ContainsFunc(p.Spec.Tolerations, func(n Toleration) bool { return semanticEqual(n, t) }) {
			errs = append(errs, field.Forbidden(spec.Child("tolerations").Index(i), "existing toleration can not be modified except its tolerationSeconds"))
		}
	}
	if semanticEqual(p.Spec, old.Spec) {
		return errs
	}
	munged := clonePodSpec(&p.Spec)
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.Tolerations = old.Spec.Tolerations
	if g := old.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if changed := changedFields(munged, &old.Spec); len(changed) > 0 {
		errs = append(errs, field.Forbidden(spec, fmt.Sprintf("pod updates may not change fields other than %s\nchanged: %s",
			strings.Join(updatablePodSpecFields, ","), strings.Join(changed, ", "))))
	}
	return errs
}

// ValidatePodStatusUpdate checks a write to pods/status: the metadata
// update rules and the status addresses.
func ValidatePodStatusUpdate(p, old *Pod) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validatePodIPs(p)...)
	return errs
}

func clonePodSpec(s *PodSpec) *PodSpec {
	var out PodSpec
	b, err := json.Marshal(s)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		c := *s
		return &c
	}
	return &out
}

// changedFields lists the top-level JSON fields that differ between a and b.
func changedFields(a, b any) []string {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if json.Unmarshal(ja, &ma) != nil || json.Unmarshal(jb, &mb) != nil {
		return []string{"(unknown)"}
	}
	var out []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || string(w) != string(v) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
