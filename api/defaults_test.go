package api

import (
	"encoding/json"
	"testing"
)

// defaultCase defaults a decoded manifest and compares the result with the
// expected JSON (both normalised through the typed struct), then checks that
// defaulting again changes nothing.
type defaultCase struct {
	name string
	in   string
	want string
}

func runDefaultCases[T any](t *testing.T, cases []defaultCase, def func(*T)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var obj, want T
			if err := json.Unmarshal([]byte(tt.in), &obj); err != nil {
				t.Fatalf("decode in: %v", err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("decode want: %v", err)
			}
			def(&obj)
			got := mustJSON(t, obj)
			if w := mustJSON(t, want); got != w {
				t.Fatalf("defaulted:\n  got  %s\n  want %s", got, w)
			}
			def(&obj)
			if again := mustJSON(t, obj); again != got {
				t.Fatalf("not idempotent:\n  once  %s\n  twice %s", got, again)
			}
		})
	}
}

func TestDefaultService(t *testing.T) {
	runDefaultCases(t, []defaultCase{
		{name: "minimal ClusterIP",
			in: `{"spec":{"ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","ports":[{"protocol":"TCP","port":80,"targetPort":80}],
				"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "named targetPort kept, UDP kept",
			in: `{"spec":{"ports":[{"port":53,"protocol":"UDP","targetPort":"dns"}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","ports":[{"protocol":"UDP","port":53,"targetPort":"dns"}],
				"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "NodePort gets externalTrafficPolicy",
			in: `{"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30080}]}}`,
			want: `{"spec":{"type":"NodePort","sessionAffinity":"None","externalTrafficPolicy":"Cluster","ports":[{"protocol":"TCP","port":80,"targetPort":80,"nodePort":30080}],
				"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "LoadBalancer",
			in: `{"spec":{"type":"LoadBalancer","ports":[{"port":443}]},"status":{"loadBalancer":{"ingress":[{"ip":"192.168.1.240"}]}}}`,
			want: `{"spec":{"type":"LoadBalancer","sessionAffinity":"None","externalTrafficPolicy":"Cluster","allocateLoadBalancerNodePorts":true,
				"ports":[{"protocol":"TCP","port":443,"targetPort":443}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]},
				"status":{"loadBalancer":{"ingress":[{"ip":"192.168.1.240","ipMode":"VIP"}]}}}`},
		{name: "ClientIP affinity gets timeout",
			in: `{"spec":{"sessionAffinity":"ClientIP","ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}},
				"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "None affinity drops config",
			in: `{"spec":{"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":5}},"ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","ports":[{"protocol":"TCP","port":80,"targetPort":80}],
				"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "clusterIP copied to clusterIPs, IPv6 family",
			in: `{"spec":{"clusterIP":"fd00::10","ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","clusterIP":"fd00::10","clusterIPs":["fd00::10"],
				"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv6"]}}`},
		{name: "clusterIPs copied to clusterIP",
			in: `{"spec":{"clusterIPs":["10.96.0.5"],"ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","clusterIP":"10.96.0.5","clusterIPs":["10.96.0.5"],
				"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "headless",
			in: `{"spec":{"clusterIP":"None","ports":[{"port":5432}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","clusterIP":"None","clusterIPs":["None"],
				"ports":[{"protocol":"TCP","port":5432,"targetPort":5432}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
		{name: "ExternalName gets no families",
			in:   `{"spec":{"type":"ExternalName","externalName":"db.example.com"}}`,
			want: `{"spec":{"type":"ExternalName","externalName":"db.example.com","sessionAffinity":"None"}}`},
		{name: "ClusterIP with externalIPs gets externalTrafficPolicy",
			in: `{"spec":{"externalIPs":["192.168.1.5"],"ports":[{"port":80}]}}`,
			want: `{"spec":{"type":"ClusterIP","sessionAffinity":"None","externalIPs":["192.168.1.5"],"externalTrafficPolicy":"Cluster",
				"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}}`},
	}, DefaultService)
}

func TestDefaultPod(t *testing.T) {
	runDefaultCases(t, []defaultCase{
		{name: "minimal",
			in: `{"spec":{"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}]}]}}`,
			want: `{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},
				"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"imagePullPolicy":"IfNotPresent",
				"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}]}}`},
		{name: "probes",
			in: `{"spec":{"restartPolicy":"Never","dnsPolicy":"Default","terminationGracePeriodSeconds":5,"containers":[{"name":"web","image":"nginx","imagePullPolicy":"Always",
				"readinessProbe":{"httpGet":{"port":8080}},"livenessProbe":{"tcpSocket":{"port":8080},"periodSeconds":3,"failureThreshold":1},
				"startupProbe":{"exec":{"command":["true"]}}}]}}`,
			want: `{"spec":{"restartPolicy":"Never","dnsPolicy":"Default","terminationGracePeriodSeconds":5,"schedulerName":"default-scheduler","securityContext":{},
				"containers":[{"name":"web","image":"nginx","imagePullPolicy":"Always","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
				"readinessProbe":{"httpGet":{"path":"/","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
				"livenessProbe":{"tcpSocket":{"port":8080},"timeoutSeconds":1,"periodSeconds":3,"successThreshold":1,"failureThreshold":1},
				"startupProbe":{"exec":{"command":["true"]},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}}]}}`},
		{name: "hostNetwork hostPort, limits to requests, fieldRef apiVersion, serviceAccount alias",
			in: `{"spec":{"hostNetwork":true,"serviceAccount":"builder","containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}],
				"env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}],
				"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m"}}}]}}`,
			want: `{"spec":{"hostNetwork":true,"serviceAccountName":"builder","serviceAccount":"builder","restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,
				"schedulerName":"default-scheduler","securityContext":{},
				"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"}],
				"env":[{"name":"NODE","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"spec.nodeName"}}}],
				"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m","memory":"1Gi"}},
				"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}]}}`},
	}, DefaultPod)
}

func TestDefaultDeployment(t *testing.T) {
	runDefaultCases(t, []defaultCase{
		{name: "minimal",
			in: `{"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
			want: `{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
				"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600,
				"template":{"metadata":{"labels":{"app":"web"}},"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,
				"schedulerName":"default-scheduler","securityContext":{},"containers":[{"name":"web","image":"nginx","imagePullPolicy":"IfNotPresent",
				"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}]}}}}`},
		{name: "explicit values kept, Recreate gets no rollingUpdate",
			in: `{"spec":{"replicas":0,"revisionHistoryLimit":0,"progressDeadlineSeconds":60,"strategy":{"type":"Recreate"},"selector":{"matchLabels":{"app":"web"}},
				"template":{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},"containers":[]}}}}`,
			want: `{"spec":{"replicas":0,"revisionHistoryLimit":0,"progressDeadlineSeconds":60,"strategy":{"type":"Recreate"},"selector":{"matchLabels":{"app":"web"}},
				"template":{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},"containers":[]}}}}`},
		{name: "partial rollingUpdate",
			in: `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}},"selector":null,"template":{"spec":{"containers":[]}}}}`,
			want: `{"spec":{"replicas":1,"revisionHistoryLimit":10,"progressDeadlineSeconds":600,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":"25%"}},
				"selector":null,"template":{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},"containers":[]}}}}`},
	}, DefaultDeployment)
}

func TestDefaultStatefulSet(t *testing.T) {
	runDefaultCases(t, []defaultCase{
		{name: "minimal",
			in: `{"spec":{"serviceName":"db","selector":{"matchLabels":{"app":"db"}},"template":{"spec":{"containers":[]}}}}`,
			want: `{"spec":{"replicas":1,"serviceName":"db","podManagementPolicy":"OrderedReady","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},
				"revisionHistoryLimit":10,"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},"selector":{"matchLabels":{"app":"db"}},
				"template":{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},"containers":[]}}},
				"status":{"replicas":0,"availableReplicas":0}}`},
		{name: "OnDelete kept",
			in: `{"spec":{"replicas":3,"podManagementPolicy":"Parallel","updateStrategy":{"type":"OnDelete"},"selector":null,"template":{"spec":{"containers":[]}}}}`,
			want: `{"spec":{"replicas":3,"podManagementPolicy":"Parallel","updateStrategy":{"type":"OnDelete"},"revisionHistoryLimit":10,"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},"selector":null,
				"template":{"spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","securityContext":{},"containers":[]}}},
				"status":{"replicas":0,"availableReplicas":0}}`},
	}, DefaultStatefulSet)
}

func TestDefaultOthers(t *testing.T) {
	t.Run("EndpointSlice", func(t *testing.T) {
		runDefaultCases(t, []defaultCase{
			{name: "ports",
				in:   `{"addressType":"IPv4","endpoints":[],"ports":[{"port":80},{"name":"dns","protocol":"UDP","port":53}]}`,
				want: `{"addressType":"IPv4","endpoints":[],"ports":[{"name":"","protocol":"TCP","port":80},{"name":"dns","protocol":"UDP","port":53}]}`},
		}, DefaultEndpointSlice)
	})
	t.Run("Namespace", func(t *testing.T) {
		runDefaultCases(t, []defaultCase{
			{name: "new", in: `{"metadata":{"name":"a"}}`,
				want: `{"metadata":{"name":"a"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`},
			{name: "terminating keeps its finalizers removed",
				in:   `{"metadata":{"name":"a","deletionTimestamp":"2025-01-01T00:00:00Z"},"status":{"phase":"Terminating"}}`,
				want: `{"metadata":{"name":"a","deletionTimestamp":"2025-01-01T00:00:00Z"},"status":{"phase":"Terminating"}}`},
		}, DefaultNamespace)
	})
	t.Run("Node", func(t *testing.T) {
		runDefaultCases(t, []defaultCase{
			{name: "allocatable from capacity, podCIDRs",
				in:   `{"spec":{"podCIDR":"10.244.1.0/24"},"status":{"capacity":{"cpu":"2"}}}`,
				want: `{"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"]},"status":{"capacity":{"cpu":"2"},"allocatable":{"cpu":"2"}}}`},
		}, DefaultNode)
	})
}
