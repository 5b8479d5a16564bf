package api

import (
	"fmt"
	"slices"
	"testing"
)

func TestResourceTable(t *testing.T) {
	type row struct {
		gv, resource, singular, kind string
		namespaced                   bool
		short, sub                   []string
		goType                       string
	}
	want := []row{
		{"v1", "namespaces", "namespace", "Namespace", false, []string{"ns"}, []string{"status"}, "*api.Namespace"},
		{"v1", "nodes", "node", "Node", false, []string{"no"}, []string{"status"}, "*api.Node"},
		{"v1", "pods", "pod", "Pod", true, []string{"po"}, []string{"status", "binding", "log", "exec", "attach", "portforward", "eviction"}, "*api.Pod"},
		{"v1", "services", "service", "Service", true, []string{"svc"}, []string{"status"}, "*api.Service"},
		{"v1", "events", "event", "Event", true, []string{"ev"}, nil, "*api.Event"},
		{"v1", "configmaps", "configmap", "ConfigMap", true, []string{"cm"}, nil, "*api.ConfigMap"},
		{"v1", "secrets", "secret", "Secret", true, nil, nil, "*api.Secret"},
		{"v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, []string{"sa"}, nil, "*api.ServiceAccount"},
		{"v1", "endpoints", "endpoints", "Endpoints", true, []string{"ep"}, nil, "*api.Endpoints"},
		{"v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", true, []string{"rc"}, []string{"status", "scale"}, "*api.ReplicationController"},
		{"apps/v1", "deployments", "deployment", "Deployment", true, []string{"deploy"}, []string{"status", "scale"}, "*api.Deployment"},
		{"apps/v1", "statefulsets", "statefulset", "StatefulSet", true, []string{"sts"}, []string{"status", "scale"}, "*api.StatefulSet"},
		{"discovery.k8s.io/v1", "endpointslices", "endpointslice", "EndpointSlice", true, nil, nil, "*api.EndpointSlice"},
		{"apps/v1", "replicasets", "replicaset", "ReplicaSet", true, []string{"rs"}, []string{"status", "scale"}, "*api.ReplicaSet"},
		{"networking.k8s.io/v1", "servicecidrs", "servicecidr", "ServiceCIDR", false, nil, []string{"status"}, "*api.ServiceCIDR"},
		{"networking.k8s.io/v1", "ipaddresses", "ipaddress", "IPAddress", false, nil, nil, "*api.IPAddress"},
		{"coordination.k8s.io/v1", "leases", "lease", "Lease", true, nil, nil, "*api.Lease"},
		{"autoscaling/v2", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", true, []string{"hpa"}, []string{"status"}, "*api.HorizontalPodAutoscaler"},
		{"batch/v1", "jobs", "job", "Job", true, nil, []string{"status"}, "*api.Job"},
		{"batch/v1", "cronjobs", "cronjob", "CronJob", true, []string{"cj"}, []string{"status"}, "*api.CronJob"},
		{"v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, []string{"pv"}, []string{"status"}, "*api.PersistentVolume"},
		{"v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, []string{"pvc"}, []string{"status"}, "*api.PersistentVolumeClaim"},
		{"storage.k8s.io/v1", "storageclasses", "storageclass", "StorageClass", false, []string{"sc"}, nil, "*api.StorageClass"},
		{"scheduling.k8s.io/v1", "priorityclasses", "priorityclass", "PriorityClass", false, []string{"pc"}, nil, "*api.PriorityClass"},
		{"apps/v1", "daemonsets", "daemonset", "DaemonSet", true, []string{"ds"}, []string{"status"}, "*api.DaemonSet"},
		{"policy/v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, []string{"pdb"}, []string{"status"}, "*api.PodDisruptionBudget"},
		{"apps/v1", "controllerrevisions", "controllerrevision", "ControllerRevision", true, nil, nil, "*api.ControllerRevision"},
		{"networking.k8s.io/v1", "ingresses", "ingress", "Ingress", true, []string{"ing"}, []string{"status"}, "*api.Ingress"},
		{"networking.k8s.io/v1", "ingressclasses", "ingressclass", "IngressClass", false, nil, nil, "*api.IngressClass"},
		{"networking.k8s.io/v1", "networkpolicies", "networkpolicy", "NetworkPolicy", true, []string{"netpol"}, nil, "*api.NetworkPolicy"},
	}
	res := Resources()
	if len(res) != len(want) {
		t.Fatalf("%d resources, want %d", len(res), len(want))
	}
	for i, w := range want {
		r := res[i]
		t.Run(w.resource, func(t *testing.T) {
			if r.GroupVersion() != w.gv || r.Resource != w.resource || r.Singular != w.singular || r.Kind != w.kind ||
				r.ListKind != w.kind+"List" || r.Namespaced != w.namespaced ||
				!slices.Equal(r.ShortNames, w.short) || !slices.Equal(r.Subresources, w.sub) {
				t.Fatalf("got %+v", *r)
			}
			obj := r.New()
			if got := fmt.Sprintf("%T", obj); got != w.goType {
				t.Fatalf("New() = %s, want %s", got, w.goType)
			}
			if tm := obj.GetTypeMeta(); tm.APIVersion != w.gv || tm.Kind != w.kind {
				t.Fatalf("New() TypeMeta = %+v", tm)
			}
			l := r.NewList()
			if tm := l.GetTypeMeta(); tm.APIVersion != w.gv || tm.Kind != w.kind+"List" {
				t.Fatalf("NewList() TypeMeta = %+v", tm)
			}
			if err := l.SetItems([]Object{r.New(), r.New()}); err != nil {
				t.Fatal(err)
			}
			if n := len(l.GetItems()); n != 2 {
				t.Fatalf("GetItems() has %d items", n)
			}
			if err := l.SetItems([]Object{&Binding{}}); err == nil {
				t.Fatal("SetItems accepted a wrong type")
			}
			l.GetItems()[0].GetObjectMeta().Name = "changed"
			if l.GetItems()[0].GetObjectMeta().Name != "changed" {
				t.Fatal("GetItems does not point into the list")
			}
			for _, f := range []any{r.Default, r.ValidateCreate, r.ValidateUpdate, r.Fields, r.PrepareForCreate, r.PrepareForUpdate} {
				if f == nil {
					t.Fatal("missing function")
				}
			}
			if hasStatus := slices.Contains(w.sub, "status"); hasStatus != (r.ValidateStatusUpdate != nil) || hasStatus != (r.PrepareForStatusUpdate != nil) {
				t.Fatalf("status functions do not match the status subresource")
			}
			if errs := r.ValidateCreate(&Binding{}); len(errs) != 1 {
				t.Fatalf("wrong type accepted: %v", errs)
			}
		})
	}
}

func TestResourcesFreshEachCall(t *testing.T) {
	a := Resources()
	a[0].Kind = "Mutated"
	a[2].ShortNames[0] = "x"
	b := Resources()
	if b[0].Kind != "Namespace" || b[2].ShortNames[0] != "po" {
		t.Fatal("Resources shares state between calls")
	}
}

func TestLookup(t *testing.T) {
	res := Resources()
	tests := []struct {
		name string
		got  *ResourceInfo
		want string
	}{
		{"core", Lookup(res, "v1", "services"), "Service"},
		{"grouped", Lookup(res, "apps/v1", "deployments"), "Deployment"},
		{"wrong group", Lookup(res, "v1", "deployments"), ""},
		{"kind", LookupKind(res, "discovery.k8s.io/v1", "EndpointSlice"), "EndpointSlice"},
		{"kind wrong version", LookupKind(res, "discovery.k8s.io/v1beta1", "EndpointSlice"), ""},
		{"short name", LookupName(res, "svc"), "Service"},
		{"singular", LookupName(res, "statefulset"), "StatefulSet"},
		{"plural", LookupName(res, "ipaddresses"), "IPAddress"},
		{"unknown", LookupName(res, "csidrivers"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if tt.got != nil {
				got = tt.got.Kind
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResourceFields(t *testing.T) {
	res := Resources()
	pod := validPod()
	pod.Spec.NodeName = "node-1"
	pod.Status.Phase, pod.Status.PodIP = PodRunning, "10.244.1.5"
	ev := validEvent()
	node := validNode()
	node.Spec.Unschedulable = true
	svc := validService()
	ns := validNamespace()
	tests := []struct {
		resource string
		obj      Object
		want     map[string]string
	}{
		{"pods", pod, map[string]string{"metadata.name": "web-0", "metadata.namespace": "default", "spec.nodeName": "node-1",
			"status.phase": "Running", "status.podIP": "10.244.1.5", "spec.restartPolicy": "Always"}},
		{"events", ev, map[string]string{"involvedObject.kind": "Pod", "involvedObject.name": "web-0", "involvedObject.namespace": "default",
			"involvedObject.uid": "u1", "reason": "Scheduled", "type": "Normal", "source": "default-scheduler"}},
		{"services", svc, map[string]string{"spec.type": "ClusterIP", "spec.clusterIP": "10.96.0.10", "metadata.name": "web"}},
		{"nodes", node, map[string]string{"spec.unschedulable": "true", "metadata.name": "node-1", "metadata.namespace": ""}},
		{"namespaces", ns, map[string]string{"status.phase": "Active", "metadata.name": "team-a"}},
		{"deployments", validDeployment(), map[string]string{"metadata.name": "web", "metadata.namespace": "default"}},
		{"replicasets", validReplicaSet(), map[string]string{"metadata.name": "frontend", "status.replicas": "0"}},
		{"replicationcontrollers", validReplicationController(), map[string]string{"metadata.name": "nginx", "status.replicas": "0"}},
		{"endpointslices", validEndpointSlice(), map[string]string{"metadata.name": "web-abcde"}},
		{"leases", validLease(), map[string]string{"metadata.namespace": "kube-node-lease"}},
		{"secrets", validSecret(), map[string]string{"type": "Opaque", "metadata.name": "db"}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			r := Lookup(res, tt.obj.GetTypeMeta().APIVersion, tt.resource)
			if r == nil {
				r = LookupName(res, tt.resource)
			}
			got := r.Fields(tt.obj)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestResourceTableLifecycle drives every resource through create and update
// as the API server would: PrepareForCreate, Default, ValidateCreate, then
// PrepareForUpdate, Default, ValidateUpdate, and for status subresources
// PrepareForStatusUpdate and ValidateStatusUpdate.
func TestResourceTableLifecycle(t *testing.T) {
	samples := map[string]func() Object{
		"namespaces": func() Object { return validNamespace() },
		"nodes":      func() Object { return validNode() },
		// A pod is stored with the serviceAccountName its create defaulted,
		// which an update may not drop.
		"pods": func() Object {
			p := validPod()
			p.Spec.ServiceAccountName = ServiceAccountDefault
			return p
		},
		"services":                 func() Object { return validService() },
		"events":                   func() Object { return validEvent() },
		"deployments":              func() Object { return validDeployment() },
		"statefulsets":             func() Object { return validStatefulSet() },
		"endpointslices":           func() Object { return validEndpointSlice() },
		"servicecidrs":             func() Object { return validServiceCIDR() },
		"ipaddresses":              func() Object { return validIPAddress() },
		"leases":                   func() Object { return validLease() },
		"configmaps":               func() Object { return validConfigMap() },
		"secrets":                  func() Object { return validSecret() },
		"serviceaccounts":          func() Object { return validServiceAccount() },
		"endpoints":                func() Object { return validEndpoints() },
		"horizontalpodautoscalers": func() Object { return validHPA() },
		"replicasets":              func() Object { return validReplicaSet() },
		"replicationcontrollers":   func() Object { return validReplicationController() },
		"jobs":                     func() Object { return validJob() },
		"cronjobs":                 func() Object { return validCronJob() },
		// storage (validation_storage_test.go)
		"persistentvolumes":      func() Object { return validPV() },
		"persistentvolumeclaims": func() Object { return validPVC() },
		"storageclasses":         func() Object { return validStorageClass() },
		"priorityclasses":        func() Object { return &PriorityClass{ObjectMeta: ObjectMeta{Name: "high"}, Value: 1000} },
		"controllerrevisions": func() Object {
			return &ControllerRevision{ObjectMeta: ObjectMeta{Name: "ds-1", Namespace: "default"}, Data: []byte(`{"spec":{}}`), Revision: 1}
		},
		"daemonsets":           func() Object { return validDaemonSet() },
		"poddisruptionbudgets": func() Object { return validPodDisruptionBudget() },
		"ingresses":            func() Object { return validIngress() },
		"ingressclasses":       func() Object { return validIngressClass() },
		"networkpolicies":      func() Object { return validNetworkPolicy() },
	}
	for _, r := range Resources() {
		t.Run(r.Resource, func(t *testing.T) {
			mk, ok := samples[r.Resource]
			if !ok {
				t.Fatal("no sample")
			}
			obj := mk()
			obj.GetTypeMeta().APIVersion, obj.GetTypeMeta().Kind = "", ""
			r.PrepareForCreate(obj)
			r.Default(obj)
			if tm := obj.GetTypeMeta(); tm.APIVersion != r.GroupVersion() || tm.Kind != r.Kind {
				t.Fatalf("Default did not set TypeMeta: %+v", tm)
			}
			if errs := r.ValidateCreate(obj); len(errs) > 0 {
				t.Fatalf("ValidateCreate: %v", errs)
			}
			stored := obj
			stored.GetObjectMeta().UID = "uid-1"
			stored.GetObjectMeta().CreationTimestamp = Now()

			upd := mk()
			upd.GetObjectMeta().Labels = map[string]string{"updated": "yes"}
			r.PrepareForUpdate(upd, stored)
			r.Default(upd)
			if errs := r.ValidateUpdate(upd, stored); len(errs) > 0 {
				t.Fatalf("ValidateUpdate: %v", errs)
			}
			if upd.GetObjectMeta().UID != "uid-1" {
				t.Fatal("PrepareForUpdate did not keep the uid")
			}
			if r.ValidateStatusUpdate != nil {
				st := mk()
				r.PrepareForStatusUpdate(st, stored)
				r.Default(st)
				if errs := r.ValidateStatusUpdate(st, stored); len(errs) > 0 {
					t.Fatalf("ValidateStatusUpdate: %v", errs)
				}
				if st.GetObjectMeta().Labels["updated"] != "" {
					t.Fatal("status update changed labels")
				}
			}
		})
	}
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	res := Resources()
	deploy := Lookup(res, "apps/v1", "deployments")

	d := validDeployment()
	d.Status.Replicas = 5
	d.Generation = 9
	deploy.PrepareForCreate(d)
	if d.Status.Replicas != 0 || d.Generation != 1 {
		t.Fatalf("create: status %+v generation %d", d.Status, d.Generation)
	}

	stored := validDeployment()
	stored.Generation = 3
	stored.Status = DeploymentStatus{Replicas: 2, ObservedGeneration: 3}

	same := validDeployment()
	deploy.PrepareForUpdate(same, stored)
	if same.Generation != 3 || same.Status.Replicas != 2 {
		t.Fatalf("unchanged spec: generation %d status %+v", same.Generation, same.Status)
	}
	changed := validDeployment()
	changed.Spec.Replicas = ptrTo[int32](4)
	changed.Status = DeploymentStatus{Replicas: 100}
	deploy.PrepareForUpdate(changed, stored)
	if changed.Generation != 4 || changed.Status.Replicas != 2 {
		t.Fatalf("changed spec: generation %d status %+v", changed.Generation, changed.Status)
	}

	status := validDeployment()
	status.Spec.Replicas = ptrTo[int32](50)
	status.Status = DeploymentStatus{Replicas: 3, ObservedGeneration: 3}
	deploy.PrepareForStatusUpdate(status, stored)
	if *status.Spec.Replicas != 1 || status.Status.Replicas != 3 || status.Generation != 3 {
		t.Fatalf("status update: spec replicas %d status %+v generation %d", *status.Spec.Replicas, status.Status, status.Generation)
	}

	pods := Lookup(res, "v1", "pods")
	p := validPod()
	p.Status = PodStatus{Phase: PodRunning, PodIP: "10.0.0.1"}
	pods.PrepareForCreate(p)
	if p.Status.Phase != PodPending || p.Status.PodIP != "" {
		t.Fatalf("pod status not reset: %+v", p.Status)
	}

	svcs := Lookup(res, "v1", "services")
	old := validService()
	s := validService()
	s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = "", nil, nil, nil
	svcs.PrepareForUpdate(s, old)
	svcs.Default(s)
	if errs := svcs.ValidateUpdate(s, old); len(errs) > 0 || s.Spec.ClusterIP != old.Spec.ClusterIP {
		t.Fatalf("service update without clusterIP: %v, clusterIP %q", errs, s.Spec.ClusterIP)
	}
}
