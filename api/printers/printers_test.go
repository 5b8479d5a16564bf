package printers

import (
	"reflect"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) api.Time { return api.Time{Time: now.Add(-d)} }

func ptr[T any](v T) *T { return &v }

func TestHumanDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{5 * time.Second, "5s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{3*time.Minute + 2*time.Second, "3m2s"},
		{15*time.Minute + 30*time.Second, "15m"},
		{179 * time.Minute, "179m"},
		{4 * time.Hour, "4h"},
		{4*time.Hour + 20*time.Minute, "4h20m"},
		{20 * time.Hour, "20h"},
		{47 * time.Hour, "47h"},
		{51 * time.Hour, "2d3h"},
		{72 * time.Hour, "3d"},
		{20 * 24 * time.Hour, "20d"},
		{(2*365 + 10) * 24 * time.Hour, "2y10d"},
		{9 * 365 * 24 * time.Hour, "9y"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := HumanDuration(tc.d); got != tc.want {
				t.Errorf("HumanDuration(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func meta(name string, age time.Duration) api.ObjectMeta {
	return api.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(age)}
}

func TestRows(t *testing.T) {
	running := api.ContainerState{Running: &api.ContainerStateRunning{StartedAt: ago(time.Minute)}}
	for _, tc := range []struct {
		name     string
		group    string
		resource string
		obj      api.Object
		want     []any
	}{
		{
			name: "pod running and ready", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: meta("web-1", 5*time.Second),
				Spec:       api.PodSpec{NodeName: "node-a", Containers: []api.Container{{Name: "c"}}},
				Status: api.PodStatus{Phase: api.PodRunning, PodIPs: []api.PodIP{{IP: "10.244.0.5"}},
					ContainerStatuses: []api.ContainerStatus{{Name: "c", Ready: true, State: running}}},
			},
			want: []any{"web-1", "1/1", "Running", "0", "5s", "10.244.0.5", "node-a", "<none>", "<none>"},
		},
		{
			name: "pod pending unscheduled", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: meta("web-2", 3*time.Minute+2*time.Second),
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "a"}, {Name: "b"}}},
				Status:     api.PodStatus{Phase: api.PodPending},
			},
			want: []any{"web-2", "0/2", "Pending", "0", "3m2s", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "pod crash looping with restarts", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: meta("web-3", 4*time.Hour),
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c"}}},
				Status: api.PodStatus{Phase: api.PodRunning, ContainerStatuses: []api.ContainerStatus{{
					Name: "c", RestartCount: 4,
					State:     api.ContainerState{Waiting: &api.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastState: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(40 * time.Second)}},
				}}},
			},
			want: []any{"web-3", "0/1", "CrashLoopBackOff", "4 (40s ago)", "4h", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "pod terminating", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: func() api.ObjectMeta {
					m := meta("web-4", 51*time.Hour)
					m.DeletionTimestamp = ptr(ago(0))
					return m
				}(),
				Spec:   api.PodSpec{Containers: []api.Container{{Name: "c"}}},
				Status: api.PodStatus{Phase: api.PodRunning, ContainerStatuses: []api.ContainerStatus{{Name: "c", Ready: true, State: running}}},
			},
			want: []any{"web-4", "1/1", "Terminating", "0", "2d3h", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "pod completed", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: meta("job-1", time.Minute),
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c"}}},
				Status: api.PodStatus{Phase: api.PodSucceeded, ContainerStatuses: []api.ContainerStatus{{
					Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{Reason: "Completed"}}}}},
			},
			want: []any{"job-1", "0/1", "Completed", "0", "60s", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "pod waiting on init container", resource: "pods",
			obj: &api.Pod{
				ObjectMeta: meta("init-1", time.Second),
				Spec:       api.PodSpec{InitContainers: []api.Container{{Name: "i1"}, {Name: "i2"}}, Containers: []api.Container{{Name: "c"}}},
				Status: api.PodStatus{Phase: api.PodPending, InitContainerStatuses: []api.ContainerStatus{
					{Name: "i1", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 0}}},
					{Name: "i2", State: api.ContainerState{Running: &api.ContainerStateRunning{}}},
				}},
			},
			want: []any{"init-1", "0/1", "Init:1/2", "0", "1s", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "service cluster ip", resource: "services",
			obj: &api.Service{
				ObjectMeta: meta("data-channel", 10*time.Minute),
				Spec: api.ServiceSpec{Type: api.ServiceTypeClusterIP, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"},
					Ports: []api.ServicePort{{Port: 9090, Protocol: api.ProtocolTCP}}, Selector: map[string]string{"app": "compute", "tier": "a"}},
			},
			want: []any{"data-channel", "ClusterIP", "10.96.0.20", "<none>", "9090/TCP", "10m", "app=compute,tier=a"},
		},
		{
			name: "service node port two ports", resource: "services",
			obj: &api.Service{
				ObjectMeta: meta("web", 30*time.Second),
				Spec: api.ServiceSpec{Type: api.ServiceTypeNodePort, ClusterIPs: []string{"10.96.0.21"},
					Ports: []api.ServicePort{{Port: 80, NodePort: 30080, Protocol: api.ProtocolTCP}, {Port: 53, NodePort: 30053, Protocol: api.ProtocolUDP}}},
			},
			want: []any{"web", "NodePort", "10.96.0.21", "<none>", "80:30080/TCP,53:30053/UDP", "30s", "<none>"},
		},
		{
			name: "service load balancer pending", resource: "services",
			obj: &api.Service{
				ObjectMeta: meta("lb", 30*time.Second),
				Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.22"},
					Ports: []api.ServicePort{{Port: 443, NodePort: 31443, Protocol: api.ProtocolTCP}}},
			},
			want: []any{"lb", "LoadBalancer", "10.96.0.22", "<pending>", "443:31443/TCP", "30s", "<none>"},
		},
		{
			name: "service load balancer with ingress", resource: "services",
			obj: &api.Service{
				ObjectMeta: meta("lb2", 30*time.Second),
				Spec:       api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.23"}, Ports: []api.ServicePort{{Port: 80, NodePort: 30001, Protocol: api.ProtocolTCP}}},
				Status:     api.ServiceStatus{LoadBalancer: api.LoadBalancerStatus{Ingress: []api.LoadBalancerIngress{{IP: "192.0.2.9"}, {IP: "192.0.2.1"}}}},
			},
			want: []any{"lb2", "LoadBalancer", "10.96.0.23", "192.0.2.1,192.0.2.9", "80:30001/TCP", "30s", "<none>"},
		},
		{
			name: "service external name", resource: "services",
			obj: &api.Service{
				ObjectMeta: meta("ext", 30*time.Second),
				Spec:       api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "example.com"},
			},
			want: []any{"ext", "ExternalName", "<none>", "example.com", "<none>", "30s", "<none>"},
		},
		{
			name: "endpointslice five addresses", group: "discovery.k8s.io", resource: "endpointslices",
			obj: &api.EndpointSlice{
				ObjectMeta:  meta("data-channel-abcde", 2*time.Minute),
				AddressType: api.AddressTypeIPv4,
				Ports:       []api.EndpointPort{{Port: ptr(int32(9090))}, {Name: ptr("metrics")}},
				Endpoints: []api.Endpoint{
					{Addresses: []string{"10.244.0.5"}}, {Addresses: []string{"10.244.0.6"}}, {Addresses: []string{"10.244.0.7"}},
					{Addresses: []string{"10.244.0.8"}}, {Addresses: []string{"10.244.0.9"}},
				},
			},
			want: []any{"data-channel-abcde", "IPv4", "9090,metrics", "10.244.0.5,10.244.0.6,10.244.0.7 + 2 more...", "2m"},
		},
		{
			name: "endpointslice empty", group: "discovery.k8s.io", resource: "endpointslices",
			obj:  &api.EndpointSlice{ObjectMeta: meta("empty-x", time.Second), AddressType: api.AddressTypeIPv4},
			want: []any{"empty-x", "IPv4", "<unset>", "<unset>", "1s"},
		},
		{
			name: "deployment", group: "apps", resource: "deployments",
			obj: &api.Deployment{
				ObjectMeta: meta("compute-node", 20*time.Hour),
				Spec: api.DeploymentSpec{Replicas: ptr(int32(5)), Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "compute"}},
					Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "w", Image: "busybox"}, {Name: "s", Image: "nginx:1"}}}}},
				Status: api.DeploymentStatus{ReadyReplicas: 3, UpdatedReplicas: 5, AvailableReplicas: 3},
			},
			want: []any{"compute-node", "3/5", int64(5), int64(3), "20h", "w,s", "busybox,nginx:1", "app=compute"},
		},
		{
			name: "statefulset", group: "apps", resource: "statefulsets",
			obj: &api.StatefulSet{
				ObjectMeta: meta("db", 72*time.Hour),
				Spec:       api.StatefulSetSpec{Replicas: ptr(int32(3)), Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "db", Image: "pg"}}}}},
				Status:     api.StatefulSetStatus{ReadyReplicas: 2},
			},
			want: []any{"db", "2/3", "3d", "db", "pg"},
		},
		{
			name: "replicaset", group: "apps", resource: "replicasets",
			obj: &api.ReplicaSet{
				ObjectMeta: meta("frontend", 2*time.Hour),
				Spec: api.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: &api.LabelSelector{MatchLabels: map[string]string{"tier": "frontend"}},
					Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "php-redis", Image: "gb-frontend:v5"}}}}},
				Status: api.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1},
			},
			want: []any{"frontend", int64(3), int64(3), int64(1), "120m", "php-redis", "gb-frontend:v5", "tier=frontend"},
		},
		{
			name: "replicationcontroller", resource: "replicationcontrollers",
			obj: &api.ReplicationController{
				ObjectMeta: meta("nginx", 5*time.Minute),
				Spec: api.ReplicationControllerSpec{Replicas: ptr(int32(2)), Selector: map[string]string{"app": "nginx", "b": "x"},
					Template: &api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx"}}}}},
				Status: api.ReplicationControllerStatus{Replicas: 1},
			},
			want: []any{"nginx", int64(2), int64(1), int64(0), "5m", "nginx", "nginx", "app=nginx,b=x"},
		},
		{
			name: "replicationcontroller without template", resource: "replicationcontrollers",
			obj:  &api.ReplicationController{ObjectMeta: meta("bare", time.Minute)},
			want: []any{"bare", int64(0), int64(0), int64(0), "60s", "", "", ""},
		},
		{
			name: "daemonset", group: "apps", resource: "daemonsets",
			obj: &api.DaemonSet{
				ObjectMeta: meta("agent", 72*time.Hour),
				Spec: api.DaemonSetSpec{
					Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
					Template: api.PodTemplateSpec{Spec: api.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
						Containers: []api.Container{{Name: "agent", Image: "agent:1"}}}}},
				Status: api.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1, NumberAvailable: 2},
			},
			want: []any{"agent", int64(3), int64(3), int64(2), int64(1), int64(2), "kubernetes.io/os=linux", "3d", "agent", "agent:1", "app=agent"},
		},
		{
			name: "poddisruptionbudget", group: "policy", resource: "poddisruptionbudgets",
			obj: &api.PodDisruptionBudget{
				ObjectMeta: meta("zk-pdb", 2*time.Hour),
				Spec:       api.PodDisruptionBudgetSpec{MaxUnavailable: ptr(api.FromInt32(1))},
				Status:     api.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
			},
			want: []any{"zk-pdb", "N/A", "1", int64(1), "120m"},
		},
		{
			name: "node ready control plane cordoned", resource: "nodes",
			obj: &api.Node{
				ObjectMeta: api.ObjectMeta{Name: "node-a", CreationTimestamp: ago(time.Hour), Labels: map[string]string{
					"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
				Spec: api.NodeSpec{Unschedulable: true},
				Status: api.NodeStatus{
					Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue}},
					Addresses:  []api.NodeAddress{{Type: api.NodeHostName, Address: "a"}, {Type: api.NodeInternalIP, Address: "192.168.1.10"}},
					NodeInfo:   api.NodeSystemInfo{KubeletVersion: "v1.31.0-skiff", OSImage: "Debian GNU/Linux 12 (bookworm)"},
				},
			},
			want: []any{"node-a", "Ready,SchedulingDisabled", "control-plane,worker", "60m", "v1.31.0-skiff",
				"192.168.1.10", "<none>", "Debian GNU/Linux 12 (bookworm)", "<unknown>", "<unknown>"},
		},
		{
			name: "node not ready", resource: "nodes",
			obj: &api.Node{
				ObjectMeta: api.ObjectMeta{Name: "node-b", CreationTimestamp: ago(time.Hour)},
				Status:     api.NodeStatus{Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionUnknown}}},
			},
			want: []any{"node-b", "NotReady", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "namespace", resource: "namespaces",
			obj:  &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "kube-system", CreationTimestamp: ago(9 * 24 * time.Hour)}, Status: api.NamespaceStatus{Phase: api.NamespaceActive}},
			want: []any{"kube-system", "Active", "9d"},
		},
		{
			name: "event", resource: "events",
			obj: &api.Event{
				ObjectMeta:     meta("web.17a", time.Minute),
				InvolvedObject: api.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{c}"},
				Reason:         "Scheduled", Message: " Successfully assigned default/web-1 to node-a\n", Type: api.EventTypeNormal,
				Source:         api.EventSource{Component: "default-scheduler"},
				FirstTimestamp: ago(90 * time.Second), LastTimestamp: ago(30 * time.Second), Count: 2,
			},
			want: []any{"30s", "Normal", "Scheduled", "pod/web-1", "spec.containers{c}", "default-scheduler",
				"Successfully assigned default/web-1 to node-a", "90s", int64(2), "web.17a"},
		},
		{
			name: "event new api with series", resource: "events",
			obj: &api.Event{
				ObjectMeta:          meta("ev2", time.Minute),
				InvolvedObject:      api.ObjectReference{Kind: "Node"},
				Reason:              "Ready",
				Type:                api.EventTypeWarning,
				EventTime:           api.MicroTime{Time: now.Add(-10 * time.Minute)},
				Series:              &api.EventSeries{Count: 7, LastObservedTime: api.MicroTime{Time: now.Add(-5 * time.Second)}},
				ReportingController: "skiff-node", ReportingInstance: "node-a",
			},
			want: []any{"5s", "Warning", "Ready", "node", "", "skiff-node, node-a", "", "10m", int64(7), "ev2"},
		},
		{
			name: "configmap counts data and binaryData", resource: "configmaps",
			obj: &api.ConfigMap{ObjectMeta: meta("conf", time.Minute),
				Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {0xff}}},
			want: []any{"conf", int64(3), "60s"},
		},
		{
			name: "secret shows its type and key count, no value", resource: "secrets",
			obj: &api.Secret{ObjectMeta: meta("tls", 3*time.Hour), Type: api.SecretTypeTLS,
				Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
			want: []any{"tls", "kubernetes.io/tls", int64(2), "3h"},
		},
		{
			name: "serviceaccount", resource: "serviceaccounts",
			obj:  &api.ServiceAccount{ObjectMeta: meta("default", 5*time.Second)},
			want: []any{"default", int64(0), "5s"},
		},
		{
			name: "endpoints four ready of five", resource: "endpoints",
			obj: &api.Endpoints{ObjectMeta: meta("web", 90*time.Second), Subsets: []api.EndpointSubset{
				{
					Addresses:         []api.EndpointAddress{{IP: "10.244.0.5"}, {IP: "10.244.0.6"}},
					NotReadyAddresses: []api.EndpointAddress{{IP: "10.244.0.9"}},
					Ports:             []api.EndpointsPort{{Name: "http", Port: 8080}},
				},
				{
					Addresses: []api.EndpointAddress{{IP: "10.244.1.2"}, {IP: "fd00::2"}},
					Ports:     []api.EndpointsPort{{Name: "http", Port: 8081}},
				},
			}},
			want: []any{"web", "10.244.0.5:8080,10.244.0.6:8080,10.244.1.2:8081 + 1 more...", "90s"},
		},
		{
			name: "endpoints two ports, ipv6", resource: "endpoints",
			obj: &api.Endpoints{ObjectMeta: meta("dns", time.Hour), Subsets: []api.EndpointSubset{{
				Addresses: []api.EndpointAddress{{IP: "fd00::5"}},
				Ports:     []api.EndpointsPort{{Name: "dns", Port: 53}, {Name: "dns-tcp", Port: 53}},
			}}},
			want: []any{"dns", "[fd00::5]:53,[fd00::5]:53", "60m"},
		},
		{
			name: "endpoints headless without ports", resource: "endpoints",
			obj: &api.Endpoints{ObjectMeta: meta("db", 5*time.Second), Subsets: []api.EndpointSubset{{
				Addresses: []api.EndpointAddress{{IP: "10.244.0.5"}, {IP: "10.244.0.6"}, {IP: "10.244.0.7"}, {IP: "10.244.0.8"}},
			}}},
			want: []any{"db", "10.244.0.5,10.244.0.6,10.244.0.7 + 1 more...", "5s"},
		},
		{
			name: "endpoints only not ready", resource: "endpoints",
			obj: &api.Endpoints{ObjectMeta: meta("slow", 5*time.Second), Subsets: []api.EndpointSubset{{
				NotReadyAddresses: []api.EndpointAddress{{IP: "10.244.0.5"}},
				Ports:             []api.EndpointsPort{{Port: 80}},
			}}},
			want: []any{"slow", "", "5s"},
		},
		{
			name: "endpoints none", resource: "endpoints",
			obj:  &api.Endpoints{ObjectMeta: meta("empty", 5*time.Second)},
			want: []any{"empty", "<none>", "5s"},
		},
		{
			name: "lease", group: "coordination.k8s.io", resource: "leases",
			obj:  &api.Lease{ObjectMeta: meta("node-a", 2*time.Minute), Spec: api.LeaseSpec{HolderIdentity: ptr("node-a")}},
			want: []any{"node-a", "node-a", "2m"},
		},
		{
			name: "servicecidr", group: "networking.k8s.io", resource: "servicecidrs",
			obj:  &api.ServiceCIDR{ObjectMeta: api.ObjectMeta{Name: "kubernetes", CreationTimestamp: ago(time.Hour)}, Spec: api.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16", "fd00::/108"}}},
			want: []any{"kubernetes", "10.96.0.0/16,fd00::/108", "60m"},
		},
		{
			name: "ipaddress", group: "networking.k8s.io", resource: "ipaddresses",
			obj: &api.IPAddress{ObjectMeta: api.ObjectMeta{Name: "10.96.0.20"},
				Spec: api.IPAddressSpec{ParentRef: &api.ParentReference{Resource: "services", Namespace: "default", Name: "data-channel"}}},
			want: []any{"10.96.0.20", "services/default/data-channel"},
		},
		{
			name: "ipaddress without parent", group: "networking.k8s.io", resource: "ipaddresses",
			obj:  &api.IPAddress{ObjectMeta: api.ObjectMeta{Name: "10.96.0.1"}},
			want: []any{"10.96.0.1", "<none>"},
		},
		{
			name: "job complete", group: "batch", resource: "jobs",
			obj: &api.Job{
				ObjectMeta: meta("pi", 10*time.Minute),
				Spec: api.JobSpec{Completions: ptr(int32(1)), Parallelism: ptr(int32(1)),
					Selector: &api.LabelSelector{MatchLabels: map[string]string{api.JobControllerUIDLabel: "u1"}},
					Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "pi", Image: "perl:5.34.0"}}}}},
				Status: api.JobStatus{Succeeded: 1, StartTime: ptr(ago(10 * time.Minute)), CompletionTime: ptr(ago(10*time.Minute - 42*time.Second)),
					Conditions: []api.JobCondition{{Type: api.JobSuccessCriteriaMet, Status: api.ConditionTrue}, {Type: api.JobComplete, Status: api.ConditionTrue}}},
			},
			want: []any{"pi", "Complete", "1/1", "42s", "10m", "pi", "perl:5.34.0", "batch.kubernetes.io/controller-uid=u1"},
		},
		{
			name: "job running work queue", group: "batch", resource: "jobs",
			obj: &api.Job{
				ObjectMeta: meta("q", 3*time.Minute),
				Spec:       api.JobSpec{Parallelism: ptr(int32(3))},
				Status:     api.JobStatus{Active: 3, StartTime: ptr(ago(2 * time.Minute))},
			},
			want: []any{"q", "Running", "0/1 of 3", "2m", "3m", "", "", ""},
		},
		{
			name: "job suspended, not started", group: "batch", resource: "jobs",
			obj: &api.Job{
				ObjectMeta: meta("s", time.Minute),
				Spec:       api.JobSpec{Completions: ptr(int32(5))},
				Status:     api.JobStatus{Conditions: []api.JobCondition{{Type: api.JobSuspended, Status: api.ConditionTrue}}},
			},
			want: []any{"s", "Suspended", "0/5", "", "60s", "", "", ""},
		},
		{
			name: "job failed", group: "batch", resource: "jobs",
			obj: &api.Job{
				ObjectMeta: meta("f", time.Hour),
				Spec:       api.JobSpec{Completions: ptr(int32(1))},
				Status: api.JobStatus{Failed: 7, StartTime: ptr(ago(time.Hour)),
					Conditions: []api.JobCondition{{Type: api.JobFailureTarget, Status: api.ConditionTrue}, {Type: api.JobFailed, Status: api.ConditionTrue}}},
			},
			want: []any{"f", "Failed", "0/1", "60m", "60m", "", "", ""},
		},
		{
			name: "cronjob", group: "batch", resource: "cronjobs",
			obj: &api.CronJob{
				ObjectMeta: meta("backup-daily", 48*time.Hour),
				Spec: api.CronJobSpec{Schedule: "0 3 * * *", Suspend: ptr(false),
					JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "b", Image: "restic"}}}}}}},
				Status: api.CronJobStatus{Active: []api.ObjectReference{{Name: "backup-daily-1"}}, LastScheduleTime: ptr(ago(5 * time.Minute))},
			},
			want: []any{"backup-daily", "0 3 * * *", "<none>", "False", int64(1), "5m", "2d", "b", "restic", ""},
		},
		{
			name: "cronjob with time zone, never scheduled", group: "batch", resource: "cronjobs",
			obj: &api.CronJob{
				ObjectMeta: meta("tz", time.Minute),
				Spec:       api.CronJobSpec{Schedule: "@hourly", TimeZone: ptr("Europe/Berlin"), Suspend: ptr(true)},
			},
			want: []any{"tz", "@hourly", "Europe/Berlin", "True", int64(0), "<none>", "60s", "", "", ""},
		},
		{
			name: "priorityclass", group: "scheduling.k8s.io", resource: "priorityclasses",
			obj: &api.PriorityClass{ObjectMeta: meta("system-node-critical", time.Hour), Value: 2000001000,
				PreemptionPolicy: ptr(api.PreemptLowerPriority)},
			want: []any{"system-node-critical", int64(2000001000), false, "60m", "PreemptLowerPriority"},
		},
		{
			name: "ingress without class or hosts", group: "networking.k8s.io", resource: "ingresses",
			obj: &api.Ingress{ObjectMeta: meta("web", time.Minute), Spec: api.IngressSpec{
				DefaultBackend: &api.IngressBackend{Service: &api.IngressServiceBackend{Name: "web", Port: api.ServiceBackendPort{Number: 80}}},
			}},
			want: []any{"web", "<none>", "*", "", "80", "60s"},
		},
		{
			name: "ingress with TLS, five rules and an address", group: "networking.k8s.io", resource: "ingresses",
			obj: &api.Ingress{ObjectMeta: meta("ha", time.Hour), Spec: api.IngressSpec{
				IngressClassName: ptr("nginx"),
				TLS:              []api.IngressTLS{{Hosts: []string{"a.example"}}},
				Rules:            []api.IngressRule{{Host: ""}, {Host: "a.example"}, {Host: "b.example"}, {Host: "c.example"}, {Host: "d.example"}},
			}, Status: api.IngressStatus{LoadBalancer: api.IngressLoadBalancerStatus{Ingress: []api.IngressLoadBalancerIngress{
				{IP: "192.0.2.9"}, {Hostname: "lb.example"}, {IP: "192.0.2.1"},
			}}}},
			want: []any{"ha", "nginx", "a.example,b.example,c.example + 2 more...", "192.0.2.1,192.0.2.9,lb.example", "80, 443", "60m"},
		},
		{
			name: "ingressclass with parameters", group: "networking.k8s.io", resource: "ingressclasses",
			obj: &api.IngressClass{ObjectMeta: meta("nginx", time.Minute), Spec: api.IngressClassSpec{
				Controller: "k8s.io/ingress-nginx",
				Parameters: &api.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"},
			}},
			want: []any{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "60s"},
		},
		{
			name: "ingressclass without parameters", group: "networking.k8s.io", resource: "ingressclasses",
			obj:  &api.IngressClass{ObjectMeta: meta("traefik", time.Minute), Spec: api.IngressClassSpec{Controller: "traefik.io/ingress-controller"}},
			want: []any{"traefik", "traefik.io/ingress-controller", "<none>", "60s"},
		},
		{
			name: "networkpolicy", group: "networking.k8s.io", resource: "networkpolicies",
			obj: &api.NetworkPolicy{ObjectMeta: meta("db", time.Minute), Spec: api.NetworkPolicySpec{
				PodSelector: api.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			}},
			want: []any{"db", "app=db", "60s"},
		},
		{
			name: "networkpolicy selecting every pod", group: "networking.k8s.io", resource: "networkpolicies",
			obj:  &api.NetworkPolicy{ObjectMeta: meta("deny-all", time.Minute)},
			want: []any{"deny-all", "<none>", "60s"},
		},
		{
			name: "unknown resource gets name and age", group: "example.com", resource: "widgets",
			obj:  &api.Lease{ObjectMeta: meta("w", 5*time.Second)},
			want: []any{"w", "5s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := For(tc.group, tc.resource)
			row := p.Row(tc.obj, now)
			if !reflect.DeepEqual(row.Cells, tc.want) {
				t.Errorf("cells\n got %#v\nwant %#v", row.Cells, tc.want)
			}
			if len(row.Cells) != len(p.Columns) {
				t.Errorf("%d cells for %d columns", len(row.Cells), len(p.Columns))
			}
		})
	}
}

func TestColumnsAsKubectlPrintsThem(t *testing.T) {
	for _, tc := range []struct {
		group, resource string
		normal, wide    string
	}{
		{"", "pods", "NAME READY STATUS RESTARTS AGE", "IP NODE NOMINATED NODE READINESS GATES"},
		{"", "services", "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE", "SELECTOR"},
		{"discovery.k8s.io", "endpointslices", "NAME ADDRESSTYPE PORTS ENDPOINTS AGE", ""},
		{"apps", "deployments", "NAME READY UP-TO-DATE AVAILABLE AGE", "CONTAINERS IMAGES SELECTOR"},
		{"apps", "statefulsets", "NAME READY AGE", "CONTAINERS IMAGES"},
		{"apps", "replicasets", "NAME DESIRED CURRENT READY AGE", "CONTAINERS IMAGES SELECTOR"},
		{"", "replicationcontrollers", "NAME DESIRED CURRENT READY AGE", "CONTAINERS IMAGES SELECTOR"},
		{"", "nodes", "NAME STATUS ROLES AGE VERSION", "INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME"},
		{"", "namespaces", "NAME STATUS AGE", ""},
		{"", "events", "LAST SEEN TYPE REASON OBJECT MESSAGE", "SUBOBJECT SOURCE FIRST SEEN COUNT NAME"},
		{"coordination.k8s.io", "leases", "NAME HOLDER AGE", ""},
		{"", "configmaps", "NAME DATA AGE", ""},
		{"", "secrets", "NAME TYPE DATA AGE", ""},
		{"", "serviceaccounts", "NAME SECRETS AGE", ""},
		{"", "endpoints", "NAME ENDPOINTS AGE", ""},
		{"networking.k8s.io", "servicecidrs", "NAME CIDRS AGE", ""},
		{"networking.k8s.io", "ipaddresses", "NAME PARENTREF", ""},
		{"batch", "jobs", "NAME STATUS COMPLETIONS DURATION AGE", "CONTAINERS IMAGES SELECTOR"},
		{"batch", "cronjobs", "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE", "CONTAINERS IMAGES SELECTOR"},
		{"", "persistentvolumes", "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE", "VOLUMEMODE"},
		{"", "persistentvolumeclaims", "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE", "VOLUMEMODE"},
		{"storage.k8s.io", "storageclasses", "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE", ""},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			var normal, wide []string
			for _, c := range For(tc.group, tc.resource).Columns {
				if c.Priority == 0 {
					normal = append(normal, c.Header())
				} else {
					wide = append(wide, c.Header())
				}
				if c.Type == "" || c.Description == "" {
					t.Errorf("column %q lacks a type or description", c.Name)
				}
			}
			if got := join(normal); got != tc.normal {
				t.Errorf("columns %q, want %q", got, tc.normal)
			}
			if got := join(wide); got != tc.wide {
				t.Errorf("wide columns %q, want %q", got, tc.wide)
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

func TestEveryResourceHasAPrinter(t *testing.T) {
	for _, info := range api.Resources() {
		p := For(info.Group, info.Resource)
		if len(p.Columns) < 2 {
			t.Errorf("%s: %d columns", info.Resource, len(p.Columns))
		}
		obj := info.New()
		obj.GetObjectMeta().Name = "x"
		row := p.Row(obj, now)
		if len(row.Cells) != len(p.Columns) {
			t.Errorf("%s: %d cells for %d columns", info.Resource, len(row.Cells), len(p.Columns))
		}
		if row.Cells[0] != "x" && info.Resource != "events" {
			t.Errorf("%s: first cell %v, want the name", info.Resource, row.Cells[0])
		}
	}
}

func TestPodConditions(t *testing.T) {
	p := For("", "pods")
	row := p.Row(&api.Pod{Status: api.PodStatus{Phase: api.PodFailed}}, now)
	if len(row.Conditions) != 1 || row.Conditions[0].Type != "Completed" || row.Conditions[0].Reason != "Failed" {
		t.Errorf("conditions %+v", row.Conditions)
	}
	row = p.Row(&api.Pod{Status: api.PodStatus{Phase: api.PodRunning}}, now)
	if row.Conditions != nil {
		t.Errorf("running pod has conditions %+v", row.Conditions)
	}
}

func TestTypeMismatchFallsBackToNameAndAge(t *testing.T) {
	p := For("", "services")
	row := p.Row(&api.Pod{ObjectMeta: meta("p", time.Second)}, now)
	want := []any{"p", "", "", "", "", "1s", ""}
	if !reflect.DeepEqual(row.Cells, want) {
		t.Errorf("got %#v", row.Cells)
	}
}

// TestPodStatusReason pins the STATUS cell of pods in the states kubectl's
// printPod distinguishes (moved here from the CLI, whose fallback printer
// now is this package's).
func TestPodStatusReason(t *testing.T) {
	deleted := api.NewTime(now)
	for _, tc := range []struct {
		name string
		pod  api.Pod
		want string
	}{
		{"no phase", api.Pod{}, ""}, // as Kubernetes; Skiff's server sets Pending on create
		{"running", api.Pod{Status: api.PodStatus{Phase: "Running", ContainerStatuses: []api.ContainerStatus{{Ready: true, State: api.ContainerState{Running: &api.ContainerStateRunning{}}}}}}, "Running"},
		{"waiting reason", api.Pod{Status: api.PodStatus{Phase: "Pending", ContainerStatuses: []api.ContainerStatus{{State: api.ContainerState{Waiting: &api.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}, "ImagePullBackOff"},
		{"completed", api.Pod{Status: api.PodStatus{Phase: "Succeeded", ContainerStatuses: []api.ContainerStatus{{State: api.ContainerState{Terminated: &api.ContainerStateTerminated{Reason: "Completed"}}}}}}, "Completed"},
		{"exit code", api.Pod{Status: api.PodStatus{Phase: "Failed", ContainerStatuses: []api.ContainerStatus{{State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 2}}}}}}, "ExitCode:2"},
		{"signal", api.Pod{Status: api.PodStatus{Phase: "Failed", ContainerStatuses: []api.ContainerStatus{{State: api.ContainerState{Terminated: &api.ContainerStateTerminated{Signal: 9}}}}}}, "Signal:9"},
		{"init waiting", api.Pod{Spec: api.PodSpec{InitContainers: []api.Container{{Name: "i"}}}, Status: api.PodStatus{Phase: "Pending", InitContainerStatuses: []api.ContainerStatus{{}}}}, "Init:0/1"},
		{"init failed", api.Pod{Spec: api.PodSpec{InitContainers: []api.Container{{Name: "i"}}}, Status: api.PodStatus{InitContainerStatuses: []api.ContainerStatus{{State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}}, "Init:Error"},
		{"terminating", api.Pod{ObjectMeta: api.ObjectMeta{DeletionTimestamp: &deleted}, Status: api.PodStatus{Phase: "Running"}}, "Terminating"},
		{"evicted", api.Pod{Status: api.PodStatus{Phase: "Failed", Reason: "Evicted"}}, "Evicted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodCells(&tc.pod, now)[2]; got != tc.want {
				t.Fatalf("status = %q, want %q", got, tc.want)
			}
		})
	}
}
