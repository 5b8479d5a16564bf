package api

// Protocol is a port's L4 protocol.
type Protocol string

const (
	ProtocolTCP  Protocol = "TCP"
	ProtocolUDP  Protocol = "UDP"
	ProtocolSCTP Protocol = "SCTP"
)

// ---- Namespace ----

// Namespace groups namespaced objects.
type Namespace struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NamespaceSpec   `json:"spec,omitempty"`
	Status     NamespaceStatus `json:"status,omitempty"`
}

// FinalizerKubernetes is the namespace finalizer that the namespace
// controller removes once the namespace's content is gone.
const FinalizerKubernetes = "kubernetes"

// NamespaceSpec holds the namespace finalizers.
type NamespaceSpec struct {
	Finalizers []string `json:"finalizers,omitempty"`
}

// Namespace phases.
const (
	NamespaceActive      = "Active"
	NamespaceTerminating = "Terminating"
)

// NamespaceStatus is Active or Terminating.
type NamespaceStatus struct {
	Phase      string               `json:"phase,omitempty"`
	Conditions []NamespaceCondition `json:"conditions,omitempty"`
}

// NamespaceCondition reports a namespace deletion problem.
type NamespaceCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// ---- Node ----

// Node is a machine that runs pods.
type Node struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NodeSpec   `json:"spec,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

// NodeSpec is the node's pod range and scheduling state.
type NodeSpec struct {
	PodCIDR       string   `json:"podCIDR,omitempty"`
	PodCIDRs      []string `json:"podCIDRs,omitempty"`
	ProviderID    string   `json:"providerID,omitempty"`
	Unschedulable bool     `json:"unschedulable,omitempty"`
	Taints        []Taint  `json:"taints,omitempty"`
}

// Taint effects.
const (
	TaintEffectNoSchedule       = "NoSchedule"
	TaintEffectPreferNoSchedule = "PreferNoSchedule"
	TaintEffectNoExecute        = "NoExecute"
)

// Taint repels pods that do not tolerate it.
type Taint struct {
	Key       string `json:"key"`
	Value     string `json:"value,omitempty"`
	Effect    string `json:"effect"`
	TimeAdded *Time  `json:"timeAdded,omitempty"`
}

// NodeStatus is what the node agent reports.
type NodeStatus struct {
	Capacity        ResourceList        `json:"capacity,omitempty"`
	Allocatable     ResourceList        `json:"allocatable,omitempty"`
	Phase           string              `json:"phase,omitempty"`
	Conditions      []NodeCondition     `json:"conditions,omitempty"`
	Addresses       []NodeAddress       `json:"addresses,omitempty"`
	DaemonEndpoints NodeDaemonEndpoints `json:"daemonEndpoints,omitempty"`
	NodeInfo        NodeSystemInfo      `json:"nodeInfo,omitempty"`
}

// Node condition types.
const (
	NodeReady = "Ready"
)

// NodeCondition is one node condition (Ready).
type NodeCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastHeartbeatTime  Time            `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// Node address types.
const (
	NodeHostName    = "Hostname"
	NodeInternalIP  = "InternalIP"
	NodeExternalIP  = "ExternalIP"
	NodeInternalDNS = "InternalDNS"
	NodeExternalDNS = "ExternalDNS"
)

// NodeAddress is one address of a node.
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// NodeDaemonEndpoints lists the ports of the node's daemons.
type NodeDaemonEndpoints struct {
	KubeletEndpoint DaemonEndpoint `json:"kubeletEndpoint,omitempty"`
}

// DaemonEndpoint is one daemon port.
type DaemonEndpoint struct {
	Port int32 `json:"Port"`
}

// NodeSystemInfo describes the node's software.
type NodeSystemInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	KubeProxyVersion        string `json:"kubeProxyVersion,omitempty"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

// ---- Pod ----

// Pod is a group of containers sharing a network namespace.
type Pod struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec   `json:"spec,omitempty"`
	Status     PodStatus `json:"status,omitempty"`
}

// PodTemplateSpec is the pod template of Deployments and StatefulSets.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec `json:"spec,omitempty"`
}

// Restart policies.
const (
	RestartPolicyAlways    = "Always"
	RestartPolicyOnFailure = "OnFailure"
	RestartPolicyNever     = "Never"
)

// DNS policies.
const (
	DNSClusterFirstWithHostNet = "ClusterFirstWithHostNet"
	DNSClusterFirst            = "ClusterFirst"
	DNSDefault                 = "Default"
	DNSNone                    = "None"
)

// DefaultSchedulerName is the schedulerName pods get by default.
const DefaultSchedulerName = "default-scheduler"

// PodSpec is the desired state of a pod.
type PodSpec struct {
	Volumes                       []Volume               `json:"volumes,omitempty"`
	InitContainers                []Container            `json:"initContainers,omitempty"`
	Containers                    []Container            `json:"containers"`
	RestartPolicy                 string                 `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64                 `json:"terminationGracePeriodSeconds,omitempty"`
	ActiveDeadlineSeconds         *int64                 `json:"activeDeadlineSeconds,omitempty"`
	DNSPolicy                     string                 `json:"dnsPolicy,omitempty"`
	NodeSelector                  map[string]string      `json:"nodeSelector,omitempty"`
	ServiceAccountName            string                 `json:"serviceAccountName,omitempty"`
	DeprecatedServiceAccount      string                 `json:"serviceAccount,omitempty"`
	AutomountServiceAccountToken  *bool                  `json:"automountServiceAccountToken,omitempty"`
	NodeName                      string                 `json:"nodeName,omitempty"`
	HostNetwork                   bool                   `json:"hostNetwork,omitempty"`
	HostPID                       bool                   `json:"hostPID,omitempty"`
	HostIPC                       bool                   `json:"hostIPC,omitempty"`
	ShareProcessNamespace         *bool                  `json:"shareProcessNamespace,omitempty"`
	SecurityContext               *PodSecurityContext    `json:"securityContext,omitempty"`
	ImagePullSecrets              []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	Hostname                      string                 `json:"hostname,omitempty"`
	Subdomain                     string                 `json:"subdomain,omitempty"`
	SchedulerName                 string                 `json:"schedulerName,omitempty"`
	Tolerations                   []Toleration           `json:"tolerations,omitempty"`
	HostAliases                   []HostAlias            `json:"hostAliases,omitempty"`
	DNSConfig                     *PodDNSConfig          `json:"dnsConfig,omitempty"`
	EnableServiceLinks            *bool                  `json:"enableServiceLinks,omitempty"`

	// Scheduling (api/types_scheduling.go).
	Affinity                  *Affinity                  `json:"affinity,omitempty"`
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	PriorityClassName         string                     `json:"priorityClassName,omitempty"`
	Priority                  *int32                     `json:"priority,omitempty"`
	PreemptionPolicy          *PreemptionPolicy          `json:"preemptionPolicy,omitempty"`
}

// Volume is a pod volume. Exactly one source must be set.
type Volume struct {
	Name         string `json:"name"`
	VolumeSource `json:",inline"`
}

// VolumeSource is the subset of volume sources Skiff supports.
type VolumeSource struct {
	HostPath  *HostPathVolumeSource  `json:"hostPath,omitempty"`
	EmptyDir  *EmptyDirVolumeSource  `json:"emptyDir,omitempty"`
	Secret    *SecretVolumeSource    `json:"secret,omitempty"`
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty"`
	// DownwardAPI writes fields of the pod to files.
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty"`
	// Projected merges several sources into one directory.
	Projected *ProjectedVolumeSource `json:"projected,omitempty"`
	// PersistentVolumeClaim mounts the volume bound to a claim of the
	// pod's namespace (api/types_storage.go).
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// NFS mounts an NFS export.
	NFS *NFSVolumeSource `json:"nfs,omitempty"`
}

// DownwardAPIVolumeSource writes pod fields (labels, annotations, name,
// namespace, uid) and container resources to files.
type DownwardAPIVolumeSource struct {
	Items       []DownwardAPIVolumeFile `json:"items,omitempty"`
	DefaultMode *int32                  `json:"defaultMode,omitempty"`
}

// DownwardAPIVolumeFile is one file of a downwardAPI volume: exactly one
// of FieldRef and ResourceFieldRef.
type DownwardAPIVolumeFile struct {
	Path             string                 `json:"path"`
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`
	Mode             *int32                 `json:"mode,omitempty"`
}

// ProjectedVolumeSource is a volume made of several sources.
type ProjectedVolumeSource struct {
	Sources     []VolumeProjection `json:"sources"`
	DefaultMode *int32             `json:"defaultMode,omitempty"`
}

// VolumeProjection is one source of a projected volume: exactly one field.
type VolumeProjection struct {
	Secret              *SecretProjection              `json:"secret,omitempty"`
	DownwardAPI         *DownwardAPIProjection         `json:"downwardAPI,omitempty"`
	ConfigMap           *ConfigMapProjection           `json:"configMap,omitempty"`
	ServiceAccountToken *ServiceAccountTokenProjection `json:"serviceAccountToken,omitempty"`
}

// SecretProjection projects a Secret's keys.
type SecretProjection struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
}

// ConfigMapProjection projects a ConfigMap's keys.
type ConfigMapProjection struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
}

// DownwardAPIProjection projects pod fields.
type DownwardAPIProjection struct {
	Items []DownwardAPIVolumeFile `json:"items,omitempty"`
}

// ServiceAccountTokenProjection projects a token of the pod's
// ServiceAccount, bound to the pod (a TokenRequest made by the node).
type ServiceAccountTokenProjection struct {
	Audience          string `json:"audience,omitempty"`
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
	Path              string `json:"path"`
}

// HostPathVolumeSource mounts a path of the node.
type HostPathVolumeSource struct {
	Path string  `json:"path"`
	Type *string `json:"type,omitempty"`
}

// EmptyDirVolumeSource is a scratch directory.
type EmptyDirVolumeSource struct {
	Medium    string    `json:"medium,omitempty"`
	SizeLimit *Quantity `json:"sizeLimit,omitempty"`
}

// KeyToPath projects one key of a ConfigMap or Secret to a file.
type KeyToPath struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	Mode *int32 `json:"mode,omitempty"`
}

// SecretVolumeSource mounts a Secret.
type SecretVolumeSource struct {
	SecretName  string      `json:"secretName,omitempty"`
	Items       []KeyToPath `json:"items,omitempty"`
	DefaultMode *int32      `json:"defaultMode,omitempty"`
	Optional    *bool       `json:"optional,omitempty"`
}

// ConfigMapVolumeSource mounts a ConfigMap.
type ConfigMapVolumeSource struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	DefaultMode          *int32      `json:"defaultMode,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
}

// Image pull policies.
const (
	PullAlways       = "Always"
	PullNever        = "Never"
	PullIfNotPresent = "IfNotPresent"
)

// Container is one container of a pod.
type Container struct {
	Name                     string               `json:"name"`
	Image                    string               `json:"image,omitempty"`
	Command                  []string             `json:"command,omitempty"`
	Args                     []string             `json:"args,omitempty"`
	WorkingDir               string               `json:"workingDir,omitempty"`
	Ports                    []ContainerPort      `json:"ports,omitempty"`
	EnvFrom                  []EnvFromSource      `json:"envFrom,omitempty"`
	Env                      []EnvVar             `json:"env,omitempty"`
	Resources                ResourceRequirements `json:"resources,omitempty"`
	RestartPolicy            *string              `json:"restartPolicy,omitempty"`
	VolumeMounts             []VolumeMount        `json:"volumeMounts,omitempty"`
	LivenessProbe            *Probe               `json:"livenessProbe,omitempty"`
	ReadinessProbe           *Probe               `json:"readinessProbe,omitempty"`
	StartupProbe             *Probe               `json:"startupProbe,omitempty"`
	Lifecycle                *Lifecycle           `json:"lifecycle,omitempty"`
	TerminationMessagePath   string               `json:"terminationMessagePath,omitempty"`
	TerminationMessagePolicy string               `json:"terminationMessagePolicy,omitempty"`
	ImagePullPolicy          string               `json:"imagePullPolicy,omitempty"`
	SecurityContext          *SecurityContext     `json:"securityContext,omitempty"`
	Stdin                    bool                 `json:"stdin,omitempty"`
	StdinOnce                bool                 `json:"stdinOnce,omitempty"`
	TTY                      bool                 `json:"tty,omitempty"`
}

// ContainerPort is a port a container listens on.
type ContainerPort struct {
	Name          string   `json:"name,omitempty"`
	HostPort      int32    `json:"hostPort,omitempty"`
	ContainerPort int32    `json:"containerPort"`
	Protocol      Protocol `json:"protocol,omitempty"`
	HostIP        string   `json:"hostIP,omitempty"`
}

// EnvFromSource takes every key of a ConfigMap or a Secret as an
// environment variable, each name preceded by Prefix. Exactly one of
// ConfigMapRef and SecretRef must be set.
type EnvFromSource struct {
	Prefix       string              `json:"prefix,omitempty"`
	ConfigMapRef *ConfigMapEnvSource `json:"configMapRef,omitempty"`
	SecretRef    *SecretEnvSource    `json:"secretRef,omitempty"`
}

// ConfigMapEnvSource names the ConfigMap of an EnvFromSource.
type ConfigMapEnvSource struct {
	LocalObjectReference `json:",inline"`
	Optional             *bool `json:"optional,omitempty"`
}

// SecretEnvSource names the Secret of an EnvFromSource.
type SecretEnvSource struct {
	LocalObjectReference `json:",inline"`
	Optional             *bool `json:"optional,omitempty"`
}

// EnvVar is one environment variable: a literal value or a reference.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource is where an environment variable's value comes from.
// Exactly one field must be set.
type EnvVarSource struct {
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`
	ConfigMapKeyRef  *ConfigMapKeySelector  `json:"configMapKeyRef,omitempty"`
	SecretKeyRef     *SecretKeySelector     `json:"secretKeyRef,omitempty"`
}

// ObjectFieldSelector selects a field of the pod (the downward API).
type ObjectFieldSelector struct {
	APIVersion string `json:"apiVersion,omitempty"`
	FieldPath  string `json:"fieldPath"`
}

// ResourceFieldSelector selects a container's resource request or limit.
type ResourceFieldSelector struct {
	ContainerName string    `json:"containerName,omitempty"`
	Resource      string    `json:"resource"`
	Divisor       *Quantity `json:"divisor,omitempty"`
}

// ConfigMapKeySelector selects one key of a ConfigMap.
type ConfigMapKeySelector struct {
	LocalObjectReference `json:",inline"`
	Key                  string `json:"key"`
	Optional             *bool  `json:"optional,omitempty"`
}

// SecretKeySelector selects one key of a Secret.
type SecretKeySelector struct {
	LocalObjectReference `json:",inline"`
	Key                  string `json:"key"`
	Optional             *bool  `json:"optional,omitempty"`
}

// ResourceRequirements are a container's requests and limits.
type ResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// VolumeMount mounts a pod volume into a container.
type VolumeMount struct {
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	MountPath string `json:"mountPath"`
	SubPath   string `json:"subPath,omitempty"`
}

// Probe is a readiness, liveness or startup check. Exactly one handler
// (exec, httpGet, tcpSocket, grpc) must be set.
type Probe struct {
	ProbeHandler                  `json:",inline"`
	InitialDelaySeconds           int32  `json:"initialDelaySeconds,omitempty"`
	TimeoutSeconds                int32  `json:"timeoutSeconds,omitempty"`
	PeriodSeconds                 int32  `json:"periodSeconds,omitempty"`
	SuccessThreshold              int32  `json:"successThreshold,omitempty"`
	FailureThreshold              int32  `json:"failureThreshold,omitempty"`
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// ProbeHandler is how a probe checks the container.
type ProbeHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty"`
	GRPC      *GRPCAction      `json:"grpc,omitempty"`
}

// ExecAction runs a command in the container; exit 0 is success.
type ExecAction struct {
	Command []string `json:"command,omitempty"`
}

// URI schemes of HTTPGetAction.
const (
	URISchemeHTTP  = "HTTP"
	URISchemeHTTPS = "HTTPS"
)

// HTTPGetAction is an HTTP GET; a 2xx or 3xx status is success.
type HTTPGetAction struct {
	Path        string       `json:"path,omitempty"`
	Port        IntOrString  `json:"port"`
	Host        string       `json:"host,omitempty"`
	Scheme      string       `json:"scheme,omitempty"`
	HTTPHeaders []HTTPHeader `json:"httpHeaders,omitempty"`
}

// HTTPHeader is one header of an HTTPGetAction.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TCPSocketAction succeeds when a TCP connection opens.
type TCPSocketAction struct {
	Port IntOrString `json:"port"`
	Host string      `json:"host,omitempty"`
}

// GRPCAction calls the gRPC health-checking protocol.
type GRPCAction struct {
	Port    int32   `json:"port"`
	Service *string `json:"service,omitempty"`
}

// Lifecycle holds hooks run after start and before stop.
type Lifecycle struct {
	PostStart *LifecycleHandler `json:"postStart,omitempty"`
	PreStop   *LifecycleHandler `json:"preStop,omitempty"`
}

// LifecycleHandler is one hook action. Exactly one field must be set.
type LifecycleHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty"`
	Sleep     *SleepAction     `json:"sleep,omitempty"`
}

// SleepAction sleeps for a number of seconds.
type SleepAction struct {
	Seconds int64 `json:"seconds"`
}

// SecurityContext is the container-level subset Skiff honours.
type SecurityContext struct {
	Capabilities             *Capabilities `json:"capabilities,omitempty"`
	Privileged               *bool         `json:"privileged,omitempty"`
	RunAsUser                *int64        `json:"runAsUser,omitempty"`
	RunAsGroup               *int64        `json:"runAsGroup,omitempty"`
	RunAsNonRoot             *bool         `json:"runAsNonRoot,omitempty"`
	ReadOnlyRootFilesystem   *bool         `json:"readOnlyRootFilesystem,omitempty"`
	AllowPrivilegeEscalation *bool         `json:"allowPrivilegeEscalation,omitempty"`

	SeccompProfile *SeccompProfile `json:"seccompProfile,omitempty"`
}

// Capabilities adds and drops Linux capabilities.
type Capabilities struct {
	Add  []string `json:"add,omitempty"`
	Drop []string `json:"drop,omitempty"`
}

// PodSecurityContext is the pod-level subset Skiff honours.
type PodSecurityContext struct {
	RunAsUser          *int64   `json:"runAsUser,omitempty"`
	RunAsGroup         *int64   `json:"runAsGroup,omitempty"`
	RunAsNonRoot       *bool    `json:"runAsNonRoot,omitempty"`
	SupplementalGroups []int64  `json:"supplementalGroups,omitempty"`
	FSGroup            *int64   `json:"fsGroup,omitempty"`
	Sysctls            []Sysctl `json:"sysctls,omitempty"`

	// FSGroupChangePolicy: Always (the default) or OnRootMismatch.
	FSGroupChangePolicy *PodFSGroupChangePolicy `json:"fsGroupChangePolicy,omitempty"`
	SeccompProfile      *SeccompProfile         `json:"seccompProfile,omitempty"`
}

// PodFSGroupChangePolicy says when a volume's ownership follows fsGroup.
type PodFSGroupChangePolicy string

// The fsGroupChangePolicy values.
const (
	FSGroupChangeOnRootMismatch PodFSGroupChangePolicy = "OnRootMismatch"
	FSGroupChangeAlways         PodFSGroupChangePolicy = "Always"
)

// SeccompProfile is a seccomp profile: the runtime's default, none, or a
// file of the node (LocalhostProfile, relative to the agent's seccomp
// directory; set only with type Localhost).
type SeccompProfile struct {
	Type             SeccompProfileType `json:"type"`
	LocalhostProfile *string            `json:"localhostProfile,omitempty"`
}

// SeccompProfileType is a SeccompProfile's kind.
type SeccompProfileType string

// The seccomp profile types.
const (
	SeccompProfileTypeUnconfined     SeccompProfileType = "Unconfined"
	SeccompProfileTypeRuntimeDefault SeccompProfileType = "RuntimeDefault"
	SeccompProfileTypeLocalhost      SeccompProfileType = "Localhost"
)

// Sysctl is a namespaced kernel parameter.
type Sysctl struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Toleration lets a pod onto nodes with a matching taint.
type Toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// HostAlias is an /etc/hosts entry.
type HostAlias struct {
	IP        string   `json:"ip"`
	Hostnames []string `json:"hostnames,omitempty"`
}

// PodDNSConfig adjusts the pod's resolv.conf.
type PodDNSConfig struct {
	Nameservers []string             `json:"nameservers,omitempty"`
	Searches    []string             `json:"searches,omitempty"`
	Options     []PodDNSConfigOption `json:"options,omitempty"`
}

// PodDNSConfigOption is one resolv.conf option (ndots:5).
type PodDNSConfigOption struct {
	Name  string  `json:"name,omitempty"`
	Value *string `json:"value,omitempty"`
}

// Pod phases.
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
	PodUnknown   = "Unknown"
)

// Pod condition types.
const (
	PodScheduled    = "PodScheduled"
	PodInitialized  = "Initialized"
	ContainersReady = "ContainersReady"
	PodReady        = "Ready"
)

// PodStatus is what the node agent and scheduler report.
type PodStatus struct {
	Phase                 string            `json:"phase,omitempty"`
	Conditions            []PodCondition    `json:"conditions,omitempty"`
	Message               string            `json:"message,omitempty"`
	Reason                string            `json:"reason,omitempty"`
	NominatedNodeName     string            `json:"nominatedNodeName,omitempty"`
	HostIP                string            `json:"hostIP,omitempty"`
	HostIPs               []HostIP          `json:"hostIPs,omitempty"`
	PodIP                 string            `json:"podIP,omitempty"`
	PodIPs                []PodIP           `json:"podIPs,omitempty"`
	StartTime             *Time             `json:"startTime,omitempty"`
	InitContainerStatuses []ContainerStatus `json:"initContainerStatuses,omitempty"`
	ContainerStatuses     []ContainerStatus `json:"containerStatuses,omitempty"`
	QOSClass              string            `json:"qosClass,omitempty"`
}

// PodCondition is one pod condition.
type PodCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastProbeTime      Time            `json:"lastProbeTime,omitempty"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// HostIP is one address of the pod's node.
type HostIP struct {
	IP string `json:"ip"`
}

// PodIP is one address of the pod.
type PodIP struct {
	IP string `json:"ip"`
}

// ContainerStatus is the observed state of one container.
type ContainerStatus struct {
	Name         string         `json:"name"`
	State        ContainerState `json:"state,omitempty"`
	LastState    ContainerState `json:"lastState,omitempty"`
	Ready        bool           `json:"ready"`
	RestartCount int32          `json:"restartCount"`
	Image        string         `json:"image"`
	ImageID      string         `json:"imageID"`
	ContainerID  string         `json:"containerID,omitempty"`
	Started      *bool          `json:"started,omitempty"`
}

// ContainerState holds at most one of waiting, running, terminated.
type ContainerState struct {
	Waiting    *ContainerStateWaiting    `json:"waiting,omitempty"`
	Running    *ContainerStateRunning    `json:"running,omitempty"`
	Terminated *ContainerStateTerminated `json:"terminated,omitempty"`
}

// ContainerStateWaiting is a container not yet running.
type ContainerStateWaiting struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ContainerStateRunning is a running container.
type ContainerStateRunning struct {
	StartedAt Time `json:"startedAt,omitempty"`
}

// ContainerStateTerminated is a container that exited.
type ContainerStateTerminated struct {
	ExitCode    int32  `json:"exitCode"`
	Signal      int32  `json:"signal,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	StartedAt   Time   `json:"startedAt,omitempty"`
	FinishedAt  Time   `json:"finishedAt,omitempty"`
	ContainerID string `json:"containerID,omitempty"`
}

// ---- Service ----

// Service types.
const (
	ServiceTypeClusterIP    = "ClusterIP"
	ServiceTypeNodePort     = "NodePort"
	ServiceTypeLoadBalancer = "LoadBalancer"
	ServiceTypeExternalName = "ExternalName"
)

// ClusterIPNone marks a headless Service.
const ClusterIPNone = "None"

// Session affinities.
const (
	ServiceAffinityNone     = "None"
	ServiceAffinityClientIP = "ClientIP"
)

// DefaultClientIPServiceAffinitySeconds is the ClientIP affinity timeout
// (3 hours) and MaxClientIPServiceAffinitySeconds its upper bound (1 day).
const (
	DefaultClientIPServiceAffinitySeconds int32 = 10800
	MaxClientIPServiceAffinitySeconds     int32 = 86400
)

// Traffic policies.
const (
	ServiceTrafficPolicyCluster = "Cluster"
	ServiceTrafficPolicyLocal   = "Local"
)

// IP families and family policies.
const (
	IPv4Protocol = "IPv4"
	IPv6Protocol = "IPv6"

	IPFamilyPolicySingleStack      = "SingleStack"
	IPFamilyPolicyPreferDualStack  = "PreferDualStack"
	IPFamilyPolicyRequireDualStack = "RequireDualStack"
)

// Service is a stable virtual address for a set of pods.
type Service struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       ServiceSpec   `json:"spec,omitempty"`
	Status     ServiceStatus `json:"status,omitempty"`
}

// ServiceSpec is the desired state of a Service.
type ServiceSpec struct {
	Ports                         []ServicePort          `json:"ports,omitempty"`
	Selector                      map[string]string      `json:"selector,omitempty"`
	ClusterIP                     string                 `json:"clusterIP,omitempty"`
	ClusterIPs                    []string               `json:"clusterIPs,omitempty"`
	Type                          string                 `json:"type,omitempty"`
	ExternalIPs                   []string               `json:"externalIPs,omitempty"`
	SessionAffinity               string                 `json:"sessionAffinity,omitempty"`
	LoadBalancerIP                string                 `json:"loadBalancerIP,omitempty"`
	LoadBalancerSourceRanges      []string               `json:"loadBalancerSourceRanges,omitempty"`
	ExternalName                  string                 `json:"externalName,omitempty"`
	ExternalTrafficPolicy         string                 `json:"externalTrafficPolicy,omitempty"`
	HealthCheckNodePort           int32                  `json:"healthCheckNodePort,omitempty"`
	PublishNotReadyAddresses      bool                   `json:"publishNotReadyAddresses,omitempty"`
	SessionAffinityConfig         *SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
	IPFamilies                    []string               `json:"ipFamilies,omitempty"`
	IPFamilyPolicy                *string                `json:"ipFamilyPolicy,omitempty"`
	AllocateLoadBalancerNodePorts *bool                  `json:"allocateLoadBalancerNodePorts,omitempty"`
	LoadBalancerClass             *string                `json:"loadBalancerClass,omitempty"`
	InternalTrafficPolicy         *string                `json:"internalTrafficPolicy,omitempty"`
	TrafficDistribution           *string                `json:"trafficDistribution,omitempty"`
}

// ServicePort is one port of a Service.
type ServicePort struct {
	Name        string      `json:"name,omitempty"`
	Protocol    Protocol    `json:"protocol,omitempty"`
	AppProtocol *string     `json:"appProtocol,omitempty"`
	Port        int32       `json:"port"`
	TargetPort  IntOrString `json:"targetPort,omitzero"`
	NodePort    int32       `json:"nodePort,omitempty"`
}

// SessionAffinityConfig configures ClientIP affinity.
type SessionAffinityConfig struct {
	ClientIP *ClientIPConfig `json:"clientIP,omitempty"`
}

// ClientIPConfig holds the affinity timeout.
type ClientIPConfig struct {
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// ServiceStatus is the load balancer state and conditions.
type ServiceStatus struct {
	LoadBalancer LoadBalancerStatus `json:"loadBalancer,omitempty"`
	Conditions   []Condition        `json:"conditions,omitempty"`
}

// LoadBalancerStatus lists the load balancer's ingress points.
type LoadBalancerStatus struct {
	Ingress []LoadBalancerIngress `json:"ingress,omitempty"`
}

// LoadBalancerIngress is one ingress point of a load balancer.
type LoadBalancerIngress struct {
	IP       string       `json:"ip,omitempty"`
	Hostname string       `json:"hostname,omitempty"`
	IPMode   *string      `json:"ipMode,omitempty"`
	Ports    []PortStatus `json:"ports,omitempty"`
}

// PortStatus is the state of one load balancer port.
type PortStatus struct {
	Port     int32    `json:"port"`
	Protocol Protocol `json:"protocol"`
	Error    *string  `json:"error,omitempty"`
}

// ---- Event ----

// Event types.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// Event is a core/v1 event about an object.
type Event struct {
	TypeMeta            `json:",inline"`
	ObjectMeta          `json:"metadata"`
	InvolvedObject      ObjectReference  `json:"involvedObject"`
	Reason              string           `json:"reason,omitempty"`
	Message             string           `json:"message,omitempty"`
	Source              EventSource      `json:"source,omitempty"`
	FirstTimestamp      Time             `json:"firstTimestamp,omitempty"`
	LastTimestamp       Time             `json:"lastTimestamp,omitempty"`
	Count               int32            `json:"count,omitempty"`
	Type                string           `json:"type,omitempty"`
	EventTime           MicroTime        `json:"eventTime,omitempty"`
	Series              *EventSeries     `json:"series,omitempty"`
	Action              string           `json:"action,omitempty"`
	Related             *ObjectReference `json:"related,omitempty"`
	ReportingController string           `json:"reportingComponent"`
	ReportingInstance   string           `json:"reportingInstance"`
}

// EventSource is the component that reported an Event.
type EventSource struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}

// EventSeries counts repeats of an Event.
type EventSeries struct {
	Count            int32     `json:"count,omitempty"`
	LastObservedTime MicroTime `json:"lastObservedTime,omitempty"`
}

// ---- ConfigMap ----

// ConfigMap holds configuration data for pods to consume. A key is in
// data or binaryData, never both; the values of both together are at most
// MaxConfigDataSize bytes. Once immutable is true, data and binaryData
// can no longer change and immutable cannot be unset.
type ConfigMap struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Immutable  *bool             `json:"immutable,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
	// BinaryData travels base64-encoded in JSON, as any []byte.
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// MaxConfigDataSize bounds the summed size of a ConfigMap's or a Secret's
// values (1 MiB, Kubernetes' MaxSecretSize).
const MaxConfigDataSize = 1 << 20

// ---- Secret ----

// Secret types (the type decides which keys validation requires).
const (
	SecretTypeOpaque              = "Opaque"
	SecretTypeServiceAccountToken = "kubernetes.io/service-account-token"
	SecretTypeDockercfg           = "kubernetes.io/dockercfg"
	SecretTypeDockerConfigJSON    = "kubernetes.io/dockerconfigjson"
	SecretTypeBasicAuth           = "kubernetes.io/basic-auth"
	SecretTypeSSHAuth             = "kubernetes.io/ssh-auth"
	SecretTypeTLS                 = "kubernetes.io/tls"
)

// The keys and annotations the Secret types require.
const (
	ServiceAccountNameKey = "kubernetes.io/service-account.name"
	DockerConfigKey       = ".dockercfg"
	DockerConfigJSONKey   = ".dockerconfigjson"
	BasicAuthUsernameKey  = "username"
	BasicAuthPasswordKey  = "password"
	SSHAuthPrivateKey     = "ssh-privatekey"
	TLSCertKey            = "tls.crt"
	TLSPrivateKeyKey      = "tls.key"
)

// Secret holds sensitive data. stringData is write-only: on every write it
// is merged into data (its keys win) and then dropped, so it is never
// stored nor returned (DefaultSecret).
type Secret struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Immutable  *bool `json:"immutable,omitempty"`
	// Data travels base64-encoded in JSON, as any []byte.
	Data       map[string][]byte `json:"data,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
	Type       string            `json:"type,omitempty"`
}

// ---- ServiceAccount ----

// ServiceAccountDefault is the ServiceAccount every namespace has and
// pods run as when they name none.
const ServiceAccountDefault = "default"

// ServiceAccount is an identity for processes that run in pods.
type ServiceAccount struct {
	TypeMeta                     `json:",inline"`
	ObjectMeta                   `json:"metadata,omitempty"`
	Secrets                      []ObjectReference      `json:"secrets,omitempty"`
	ImagePullSecrets             []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	AutomountServiceAccountToken *bool                  `json:"automountServiceAccountToken,omitempty"`
}

// ---- Endpoints ----

// Annotations and labels of Endpoints, as Kubernetes names them.
const (
	// EndpointsOverCapacityAnnotation is set to "truncated" on an
	// Endpoints whose controller dropped addresses beyond
	// MaxEndpointsAddresses.
	EndpointsOverCapacityAnnotation = "endpoints.kubernetes.io/over-capacity"
	// EndpointsLastChangeTriggerTimeAnnotation is the time of the change
	// (a pod's or the Service's) that triggered the last write.
	EndpointsLastChangeTriggerTimeAnnotation = "endpoints.kubernetes.io/last-change-trigger-time"
	// LabelSkipMirror "true" keeps an Endpoints out of the EndpointSlice
	// mirroring controller.
	LabelSkipMirror = "endpointslice.kubernetes.io/skip-mirror"
	// LabelHeadlessService marks the Endpoints and EndpointSlices of a
	// headless Service.
	LabelHeadlessService = "service.kubernetes.io/headless"
)

// MaxEndpointsAddresses is how many addresses (ready and not ready) the
// endpoints controller writes into one Endpoints; Kubernetes' controller
// truncates beyond it. The API itself accepts more.
const MaxEndpointsAddresses = 1000

// Endpoints (core/v1) is the legacy, one-object-per-Service list of a
// Service's endpoints: subsets of addresses that share a set of ports.
// The endpoints controller writes it for Services with a selector; for a
// Service without one it is written by users and mirrored into
// EndpointSlices.
type Endpoints struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Subsets    []EndpointSubset `json:"subsets,omitempty"`
}

// EndpointSubset is a group of addresses with a common set of ports; the
// endpoints are the cross product of addresses and ports.
type EndpointSubset struct {
	Addresses         []EndpointAddress `json:"addresses,omitempty"`
	NotReadyAddresses []EndpointAddress `json:"notReadyAddresses,omitempty"`
	Ports             []EndpointsPort   `json:"ports,omitempty"`
}

// EndpointAddress is one endpoint's IP and where it comes from.
type EndpointAddress struct {
	IP        string           `json:"ip"`
	Hostname  string           `json:"hostname,omitempty"`
	NodeName  *string          `json:"nodeName,omitempty"`
	TargetRef *ObjectReference `json:"targetRef,omitempty"`
}

// EndpointsPort is core/v1's EndpointPort (an Endpoints subset's port;
// the discovery.k8s.io EndpointPort of slices is EndpointPort).
type EndpointsPort struct {
	Name        string   `json:"name,omitempty"`
	Port        int32    `json:"port"`
	Protocol    Protocol `json:"protocol,omitempty"`
	AppProtocol *string  `json:"appProtocol,omitempty"`
}
