package api

import (
	"strings"
	"testing"
)

func TestValidatePod(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Pod)
		want   []string
	}{
		{name: "valid", mutate: func(*Pod) {}},
		{name: "valid full", mutate: func(p *Pod) {
			c := &p.Spec.Containers[0]
			c.Command = []string{"/bin/sh", "-c"}
			c.Args = []string{"exec nginx"}
			c.WorkingDir = "/srv"
			c.Env = []EnvVar{
				{Name: "MODE", Value: "prod"},
				{Name: "POD_IP", ValueFrom: &EnvVarSource{FieldRef: &ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "APP", ValueFrom: &EnvVarSource{FieldRef: &ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
				{Name: "PASSWORD", ValueFrom: &EnvVarSource{SecretKeyRef: &SecretKeySelector{LocalObjectReference: LocalObjectReference{Name: "db"}, Key: "password"}}},
				{Name: "CPU", ValueFrom: &EnvVarSource{ResourceFieldRef: &ResourceFieldSelector{Resource: "limits.cpu"}}},
			}
			c.Resources = ResourceRequirements{Limits: ResourceList{"cpu": "500m", "memory": "128Mi"}, Requests: ResourceList{"cpu": "100m"}}
			c.LivenessProbe = &Probe{ProbeHandler: ProbeHandler{TCPSocket: &TCPSocketAction{Port: FromInt32(80)}}, InitialDelaySeconds: 5}
			c.StartupProbe = &Probe{ProbeHandler: ProbeHandler{Exec: &ExecAction{Command: []string{"true"}}}}
			c.VolumeMounts = []VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "conf", MountPath: "/etc/conf", ReadOnly: true}}
			c.Lifecycle = &Lifecycle{PreStop: &LifecycleHandler{Sleep: &SleepAction{Seconds: 5}}}
			p.Spec.Volumes = []Volume{
				{Name: "data", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{SizeLimit: ptrTo(Quantity("1Gi"))}}},
				{Name: "conf", VolumeSource: VolumeSource{ConfigMap: &ConfigMapVolumeSource{LocalObjectReference: LocalObjectReference{Name: "web-conf"}}}},
			}
			p.Spec.InitContainers = []Container{{Name: "init", Image: "busybox", Command: []string{"true"}}}
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
			p.Spec.Hostname, p.Spec.Subdomain = "web-0", "web"
			p.Spec.DNSPolicy = DNSNone
			p.Spec.DNSConfig = &PodDNSConfig{Nameservers: []string{"10.96.0.10"}, Searches: []string{"default.svc.cluster.local."}, Options: []PodDNSConfigOption{{Name: "ndots", Value: ptrTo("5")}}}
			p.Spec.Tolerations = []Toleration{{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: TaintEffectNoExecute, TolerationSeconds: ptrTo[int64](300)}}
			DefaultPod(p)
		}},
		{name: "valid sidecar with probe", mutate: func(p *Pod) {
			p.Spec.InitContainers = []Container{{Name: "proxy", Image: "envoy", RestartPolicy: ptrTo(RestartPolicyAlways),
				ReadinessProbe: &Probe{ProbeHandler: ProbeHandler{TCPSocket: &TCPSocketAction{Port: FromInt32(15000)}}}}}
			DefaultPod(p)
		}},
		{name: "valid grpc probe", mutate: func(p *Pod) {
			p.Spec.Containers[0].ReadinessProbe = &Probe{ProbeHandler: ProbeHandler{GRPC: &GRPCAction{Port: 9090}}}
			DefaultPod(p)
		}},

		{name: "bad name", mutate: func(p *Pod) { p.Name = "Web_0" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "no name", mutate: func(p *Pod) { p.Name = "" },
			want: []string{"FieldValueRequired metadata.name"}},
		{name: "bad generateName", mutate: func(p *Pod) { p.GenerateName = "Web-" },
			want: []string{"FieldValueInvalid metadata.generateName"}},
		{name: "generateName with trailing dash is fine", mutate: func(p *Pod) { p.GenerateName = "web-" }},
		{name: "bad namespace", mutate: func(p *Pod) { p.Namespace = "my.ns" },
			want: []string{"FieldValueInvalid metadata.namespace"}},
		{name: "no containers", mutate: func(p *Pod) { p.Spec.Containers = nil },
			want: []string{"FieldValueRequired spec.containers"}},
		{name: "container without name", mutate: func(p *Pod) { p.Spec.Containers[0].Name = "" },
			want: []string{"FieldValueRequired spec.containers[0].name"}},
		{name: "container bad name", mutate: func(p *Pod) { p.Spec.Containers[0].Name = "Web" },
			want: []string{"FieldValueInvalid spec.containers[0].name"}},
		{name: "duplicate container names", mutate: func(p *Pod) {
			c := p.Spec.Containers[0]
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, want: []string{"FieldValueDuplicate spec.containers[1].name"}},
		{name: "init container name clashes", mutate: func(p *Pod) {
			p.Spec.InitContainers = []Container{{Name: "web", Image: "busybox"}}
			DefaultPod(p)
		}, want: []string{"FieldValueDuplicate spec.containers[0].name"}},
		{name: "no image", mutate: func(p *Pod) { p.Spec.Containers[0].Image = "" },
			want: []string{"FieldValueRequired spec.containers[0].image"}},
		{name: "image with spaces", mutate: func(p *Pod) { p.Spec.Containers[0].Image = " nginx" },
			want: []string{"FieldValueInvalid spec.containers[0].image"}},
		{name: "bad pull policy", mutate: func(p *Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" },
			want: []string{"FieldValueNotSupported spec.containers[0].imagePullPolicy"}},
		{name: "container port zero", mutate: func(p *Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 },
			want: []string{"FieldValueRequired spec.containers[0].ports[0].containerPort"}},
		{name: "container port too big", mutate: func(p *Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 65536 },
			want: []string{"FieldValueInvalid spec.containers[0].ports[0].containerPort"}},
		{name: "container port bad name", mutate: func(p *Pod) { p.Spec.Containers[0].Ports[0].Name = "web_http" },
			want: []string{"FieldValueInvalid spec.containers[0].ports[0].name"}},
		{name: "container port name too long", mutate: func(p *Pod) {
			p.Spec.Containers[0].Ports[0].Name = "http-alternative"
			p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = FromInt32(80)
		}, want: []string{"FieldValueInvalid spec.containers[0].ports[0].name"}},
		{name: "duplicate container port name", mutate: func(p *Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, ContainerPort{Name: "http", ContainerPort: 81, Protocol: ProtocolTCP})
		}, want: []string{"FieldValueDuplicate spec.containers[0].ports[1].name"}},
		{name: "container port sctp", mutate: func(p *Pod) { p.Spec.Containers[0].Ports[0].Protocol = ProtocolSCTP },
			want: []string{"FieldValueNotSupported spec.containers[0].ports[0].protocol"}},
		{name: "hostNetwork hostPort mismatch", mutate: func(p *Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, want: []string{"FieldValueInvalid spec.containers[0].ports[0].hostPort"}},
		{name: "env without name", mutate: func(p *Pod) { p.Spec.Containers[0].Env = []EnvVar{{Value: "x"}} },
			want: []string{"FieldValueRequired spec.containers[0].env[0].name"}},
		{name: "env bad name", mutate: func(p *Pod) { p.Spec.Containers[0].Env = []EnvVar{{Name: "A=B"}} },
			want: []string{"FieldValueInvalid spec.containers[0].env[0].name"}},
		{name: "env value and valueFrom", mutate: func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "A", Value: "x", ValueFrom: &EnvVarSource{FieldRef: &ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
		}, want: []string{"FieldValueInvalid spec.containers[0].env[0].valueFrom"}},
		{name: "env empty valueFrom", mutate: func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "A", ValueFrom: &EnvVarSource{}}}
		}, want: []string{"FieldValueInvalid spec.containers[0].env[0].valueFrom"}},
		{name: "env two sources", mutate: func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "A", ValueFrom: &EnvVarSource{
				FieldRef:     &ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
				SecretKeyRef: &SecretKeySelector{LocalObjectReference: LocalObjectReference{Name: "s"}, Key: "k"},
			}}}
		}, want: []string{"FieldValueInvalid spec.containers[0].env[0].valueFrom"}},
		{name: "env unsupported fieldPath", mutate: func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "A", ValueFrom: &EnvVarSource{FieldRef: &ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.containers"}}}}
		}, want: []string{"FieldValueNotSupported spec.containers[0].env[0].valueFrom.fieldRef.fieldPath"}},
		{name: "env secret without key", mutate: func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "A", ValueFrom: &EnvVarSource{SecretKeyRef: &SecretKeySelector{LocalObjectReference: LocalObjectReference{Name: "s"}}}}}
		}, want: []string{"FieldValueRequired spec.containers[0].env[0].valueFrom.secretKeyRef.key"}},
		{name: "envFrom ok", mutate: func(p *Pod) {
			p.Spec.Containers[0].EnvFrom = []EnvFromSource{
				{Prefix: "CFG_", ConfigMapRef: &ConfigMapEnvSource{LocalObjectReference: LocalObjectReference{Name: "cfg"}}},
				{SecretRef: &SecretEnvSource{LocalObjectReference: LocalObjectReference{Name: "db"}, Optional: ptrTo(true)}},
			}
		}},
		{name: "envFrom no source", mutate: func(p *Pod) { p.Spec.Containers[0].EnvFrom = []EnvFromSource{{Prefix: "X"}} },
			want: []string{"FieldValueInvalid spec.containers[0].envFrom"}},
		{name: "envFrom two sources", mutate: func(p *Pod) {
			p.Spec.Containers[0].EnvFrom = []EnvFromSource{{
				ConfigMapRef: &ConfigMapEnvSource{LocalObjectReference: LocalObjectReference{Name: "cfg"}},
				SecretRef:    &SecretEnvSource{LocalObjectReference: LocalObjectReference{Name: "db"}},
			}}
		}, want: []string{"FieldValueInvalid spec.containers[0].envFrom"}},
		{name: "envFrom bad prefix and name", mutate: func(p *Pod) {
			p.Spec.Containers[0].EnvFrom = []EnvFromSource{{Prefix: "A=", ConfigMapRef: &ConfigMapEnvSource{LocalObjectReference: LocalObjectReference{Name: "Cfg"}}}}
		}, want: []string{"FieldValueInvalid spec.containers[0].envFrom[0].prefix", "FieldValueInvalid spec.containers[0].envFrom[0].configMapRef.name"}},
		{name: "envFrom secret without name", mutate: func(p *Pod) { p.Spec.Containers[0].EnvFrom = []EnvFromSource{{SecretRef: &SecretEnvSource{}}} },
			want: []string{"FieldValueRequired spec.containers[0].envFrom[0].secretRef.name"}},
		{name: "probe without handler", mutate: func(p *Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet = nil },
			want: []string{"FieldValueRequired spec.containers[0].readinessProbe"}},
		{name: "probe with two handlers", mutate: func(p *Pod) {
			p.Spec.Containers[0].ReadinessProbe.TCPSocket = &TCPSocketAction{Port: FromInt32(80)}
		}, want: []string{"FieldValueForbidden spec.containers[0].readinessProbe.tcpSocket"}},
		{name: "probe negative period", mutate: func(p *Pod) { p.Spec.Containers[0].ReadinessProbe.PeriodSeconds = -1 },
			want: []string{"FieldValueInvalid spec.containers[0].readinessProbe.periodSeconds"}},
		{name: "probe negative delay", mutate: func(p *Pod) { p.Spec.Containers[0].ReadinessProbe.InitialDelaySeconds = -5 },
			want: []string{"FieldValueInvalid spec.containers[0].readinessProbe.initialDelaySeconds"}},
		{name: "probe bad scheme", mutate: func(p *Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet.Scheme = "FTP" },
			want: []string{"FieldValueNotSupported spec.containers[0].readinessProbe.httpGet.scheme"}},
		{name: "probe bad port", mutate: func(p *Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = FromInt32(0) },
			want: []string{"FieldValueInvalid spec.containers[0].readinessProbe.httpGet.port"}},
		{name: "probe bad header", mutate: func(p *Pod) {
			p.Spec.Containers[0].ReadinessProbe.HTTPGet.HTTPHeaders = []HTTPHeader{{Name: "X Bad", Value: "v"}}
		}, want: []string{"FieldValueInvalid spec.containers[0].readinessProbe.httpGet.httpHeaders"}},
		{name: "exec probe without command", mutate: func(p *Pod) {
			p.Spec.Containers[0].ReadinessProbe = &Probe{ProbeHandler: ProbeHandler{Exec: &ExecAction{}}}
			DefaultPod(p)
		}, want: []string{"FieldValueRequired spec.containers[0].readinessProbe.exec.command"}},
		{name: "liveness success threshold", mutate: func(p *Pod) {
			p.Spec.Containers[0].LivenessProbe = &Probe{ProbeHandler: ProbeHandler{TCPSocket: &TCPSocketAction{Port: FromInt32(80)}}, SuccessThreshold: 2}
			DefaultPod(p)
		}, want: []string{"FieldValueInvalid spec.containers[0].livenessProbe.successThreshold"}},
		{name: "probe on plain init container", mutate: func(p *Pod) {
			p.Spec.InitContainers = []Container{{Name: "init", Image: "busybox",
				ReadinessProbe: &Probe{ProbeHandler: ProbeHandler{TCPSocket: &TCPSocketAction{Port: FromInt32(80)}}}}}
			DefaultPod(p)
		}, want: []string{"FieldValueForbidden spec.initContainers[0].readinessProbe"}},
		{name: "restartPolicy on regular container", mutate: func(p *Pod) { p.Spec.Containers[0].RestartPolicy = ptrTo(RestartPolicyAlways) },
			want: []string{"FieldValueForbidden spec.containers[0].restartPolicy"}},
		{name: "bad restartPolicy", mutate: func(p *Pod) { p.Spec.RestartPolicy = "Sometimes" },
			want: []string{"FieldValueNotSupported spec.restartPolicy"}},
		{name: "bad dnsPolicy", mutate: func(p *Pod) { p.Spec.DNSPolicy = "Cluster" },
			want: []string{"FieldValueNotSupported spec.dnsPolicy"}},
		{name: "dns None without config", mutate: func(p *Pod) { p.Spec.DNSPolicy = DNSNone },
			want: []string{"FieldValueRequired spec.dnsConfig"}},
		{name: "too many nameservers", mutate: func(p *Pod) {
			p.Spec.DNSConfig = &PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"}}
		}, want: []string{"FieldValueInvalid spec.dnsConfig.nameservers"}},
		{name: "bad nameserver", mutate: func(p *Pod) { p.Spec.DNSConfig = &PodDNSConfig{Nameservers: []string{"dns"}} },
			want: []string{"FieldValueInvalid spec.dnsConfig.nameservers[0]"}},
		{name: "bad hostname", mutate: func(p *Pod) { p.Spec.Hostname = "web.0" },
			want: []string{"FieldValueInvalid spec.hostname"}},
		{name: "bad subdomain", mutate: func(p *Pod) { p.Spec.Subdomain = "Web" },
			want: []string{"FieldValueInvalid spec.subdomain"}},
		{name: "bad nodeName", mutate: func(p *Pod) { p.Spec.NodeName = "Node_1" },
			want: []string{"FieldValueInvalid spec.nodeName"}},
		{name: "bad nodeSelector value", mutate: func(p *Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a b"} },
			want: []string{"FieldValueInvalid spec.nodeSelector[zone]"}},
		{name: "negative grace period", mutate: func(p *Pod) { p.Spec.TerminationGracePeriodSeconds = ptrTo[int64](-1) },
			want: []string{"FieldValueInvalid spec.terminationGracePeriodSeconds"}},
		{name: "zero activeDeadlineSeconds", mutate: func(p *Pod) { p.Spec.ActiveDeadlineSeconds = ptrTo[int64](0) },
			want: []string{"FieldValueInvalid spec.activeDeadlineSeconds"}},
		{name: "bad quantity", mutate: func(p *Pod) {
			p.Spec.Containers[0].Resources.Limits = ResourceList{"memory": "lots"}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.limits[memory]"}},
		{name: "negative quantity", mutate: func(p *Pod) {
			p.Spec.Containers[0].Resources.Requests = ResourceList{"cpu": "-1"}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.requests[cpu]"}},
		{name: "unknown resource", mutate: func(p *Pod) {
			p.Spec.Containers[0].Resources.Requests = ResourceList{"gpu": "1"}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.requests[gpu]"}},
		{name: "request over limit", mutate: func(p *Pod) {
			p.Spec.Containers[0].Resources = ResourceRequirements{Limits: ResourceList{"cpu": "100m"}, Requests: ResourceList{"cpu": "0.5"}}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.requests[cpu]"}},
		{name: "mount of unknown volume", mutate: func(p *Pod) {
			p.Spec.Containers[0].VolumeMounts = []VolumeMount{{Name: "nope", MountPath: "/x"}}
		}, want: []string{"FieldValueNotFound spec.containers[0].volumeMounts[0].name"}},
		{name: "volume without source", mutate: func(p *Pod) { p.Spec.Volumes = []Volume{{Name: "v"}} },
			want: []string{"FieldValueRequired spec.volumes[0]"}},
		{name: "volume with two sources", mutate: func(p *Pod) {
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: VolumeSource{HostPath: &HostPathVolumeSource{Path: "/x"}, EmptyDir: &EmptyDirVolumeSource{}}}}
		}, want: []string{"FieldValueForbidden spec.volumes[0].emptyDir"}},
		{name: "duplicate volume", mutate: func(p *Pod) {
			v := Volume{Name: "v", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{}}}
			p.Spec.Volumes = []Volume{v, v}
		}, want: []string{"FieldValueDuplicate spec.volumes[1].name"}},
		{name: "hostPath backsteps", mutate: func(p *Pod) {
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: VolumeSource{HostPath: &HostPathVolumeSource{Path: "/a/../etc"}}}}
		}, want: []string{"FieldValueInvalid spec.volumes[0].hostPath.path"}},
		{name: "configMap without name", mutate: func(p *Pod) {
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: VolumeSource{ConfigMap: &ConfigMapVolumeSource{}}}}
		}, want: []string{"FieldValueRequired spec.volumes[0].configMap.name"}},
		{name: "toleration without key needs Exists", mutate: func(p *Pod) {
			p.Spec.Tolerations = []Toleration{{Operator: "Equal", Value: "x"}}
		}, want: []string{"FieldValueInvalid spec.tolerations[0].operator"}},
		{name: "bad pod IP", mutate: func(p *Pod) { p.Status.PodIPs = []PodIP{{IP: "10.0.0"}} },
			want: []string{"FieldValueInvalid status.podIPs[0]"}},
		{name: "dual-stack host IPs", mutate: func(p *Pod) { p.Status.HostIPs = []HostIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}} }},
		{name: "two IPv4 host IPs", mutate: func(p *Pod) { p.Status.HostIPs = []HostIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}} },
			want: []string{"FieldValueInvalid status.hostIPs"}},
		{name: "seccomp RuntimeDefault and OnRootMismatch", mutate: func(p *Pod) {
			fp := FSGroupChangeOnRootMismatch
			p.Spec.SecurityContext = &PodSecurityContext{FSGroupChangePolicy: &fp, SeccompProfile: &SeccompProfile{Type: SeccompProfileTypeRuntimeDefault}}
		}},
		{name: "seccomp Localhost", mutate: func(p *Pod) {
			lp := "profiles/audit.json"
			p.Spec.Containers[0].SecurityContext = &SecurityContext{SeccompProfile: &SeccompProfile{Type: SeccompProfileTypeLocalhost, LocalhostProfile: &lp}}
		}},
		{name: "seccomp Localhost without a profile", mutate: func(p *Pod) {
			p.Spec.Containers[0].SecurityContext = &SecurityContext{SeccompProfile: &SeccompProfile{Type: SeccompProfileTypeLocalhost}}
		}, want: []string{"FieldValueRequired spec.containers[0].securityContext.seccompProfile.localhostProfile"}},
		{name: "seccomp Localhost profile with backsteps", mutate: func(p *Pod) {
			lp := "../etc/x.json"
			p.Spec.SecurityContext = &PodSecurityContext{SeccompProfile: &SeccompProfile{Type: SeccompProfileTypeLocalhost, LocalhostProfile: &lp}}
		}, want: []string{"FieldValueInvalid spec.securityContext.seccompProfile.localhostProfile", "FieldValueInvalid spec.securityContext.seccompProfile.localhostProfile"}},
		{name: "seccomp profile without Localhost", mutate: func(p *Pod) {
			lp := "x.json"
			p.Spec.SecurityContext = &PodSecurityContext{SeccompProfile: &SeccompProfile{Type: SeccompProfileTypeRuntimeDefault, LocalhostProfile: &lp}}
		}, want: []string{"FieldValueInvalid spec.securityContext.seccompProfile.localhostProfile"}},
		{name: "seccomp unknown type", mutate: func(p *Pod) {
			p.Spec.Containers[0].SecurityContext = &SecurityContext{SeccompProfile: &SeccompProfile{Type: "Default"}}
		}, want: []string{"FieldValueNotSupported spec.containers[0].securityContext.seccompProfile.type"}},
		{name: "seccomp without type", mutate: func(p *Pod) {
			p.Spec.Containers[0].SecurityContext = &SecurityContext{SeccompProfile: &SeccompProfile{}}
		}, want: []string{"FieldValueRequired spec.containers[0].securityContext.seccompProfile.type"}},
		{name: "negative supplemental group", mutate: func(p *Pod) {
			p.Spec.SecurityContext = &PodSecurityContext{SupplementalGroups: []int64{1, -2}}
		}, want: []string{"FieldValueInvalid spec.securityContext.supplementalGroups[1]"}},
		{name: "unknown fsGroupChangePolicy", mutate: func(p *Pod) {
			fp := PodFSGroupChangePolicy("Never")
			p.Spec.SecurityContext = &PodSecurityContext{FSGroupChangePolicy: &fp}
		}, want: []string{"FieldValueNotSupported spec.securityContext.fsGroupChangePolicy"}},
		{name: "no escalation with CAP_SYS_ADMIN", mutate: func(p *Pod) {
			f := false
			p.Spec.Containers[0].SecurityContext = &SecurityContext{AllowPrivilegeEscalation: &f, Capabilities: &Capabilities{Add: []string{"CAP_SYS_ADMIN"}}}
		}, want: []string{"FieldValueInvalid spec.containers[0].securityContext"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPod()
			tt.mutate(p)
			checkErrs(t, ValidatePod(p), tt.want...)
		})
	}
}

func TestValidatePodUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Pod)
		want   []string
	}{
		{name: "unchanged", mutate: func(*Pod) {}},
		{name: "change image", mutate: func(p *Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }},
		{name: "set activeDeadlineSeconds", mutate: func(p *Pod) { p.Spec.ActiveDeadlineSeconds = ptrTo[int64](60) }},
		{name: "add toleration", mutate: func(p *Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, Toleration{Key: "a", Operator: "Exists"})
		}},
		{name: "change labels", mutate: func(p *Pod) { p.Labels["tier"] = "front" }},
		{name: "change command", mutate: func(p *Pod) { p.Spec.Containers[0].Command = []string{"sh"} },
			want: []string{"FieldValueForbidden spec"}},
		{name: "set nodeName", mutate: func(p *Pod) { p.Spec.NodeName = "node-1" },
			want: []string{"FieldValueForbidden spec"}},
		{name: "add container", mutate: func(p *Pod) {
			p.Spec.Containers = append(p.Spec.Containers, Container{Name: "side", Image: "busybox", ImagePullPolicy: PullIfNotPresent})
		}, want: []string{"FieldValueForbidden spec.containers"}},
		{name: "rename", mutate: func(p *Pod) { p.Name = "web-1" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "change uid", mutate: func(p *Pod) { p.UID = "other" },
			want: []string{"FieldValueInvalid metadata.uid"}},
		{name: "invalid image", mutate: func(p *Pod) { p.Spec.Containers[0].Image = "" },
			want: []string{"FieldValueRequired spec.containers[0].image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPod()
			old.UID = "u1"
			p := validPod()
			p.UID = "u1"
			tt.mutate(p)
			checkErrs(t, ValidatePodUpdate(p, old), tt.want...)
		})
	}
	t.Run("message names the changed field", func(t *testing.T) {
		old := validPod()
		p := validPod()
		p.Spec.Hostname = "x"
		errs := ValidatePodUpdate(p, old)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "pod updates may not change fields other than `spec.containers[*].image`") ||
			!strings.Contains(errs[0].Error(), "changed: hostname") {
			t.Fatalf("got %v", errs)
		}
	})
}
