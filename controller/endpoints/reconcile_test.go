package endpoints_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/endpoints"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func service(name string, ports ...api.ServicePort) *api.Service {
	return &api.Service{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "svc-uid", Labels: map[string]string{"team": "a"},
			CreationTimestamp: api.Time{Time: t0}},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": name}, ClusterIP: "10.96.0.10", Ports: ports},
	}
}

func httpPort(target api.IntOrString) api.ServicePort {
	return api.ServicePort{Name: "http", Port: 80, Protocol: api.ProtocolTCP, TargetPort: target}
}

// pod is a scheduled pod with an IP; ready sets its Ready condition.
func pod(name, ip string, ready bool, ports ...api.ContainerPort) *api.Pod {
	status := api.ConditionFalse
	if ready {
		status = api.ConditionTrue
	}
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name, Labels: map[string]string{"app": "web"},
			CreationTimestamp: api.Time{Time: t0}},
		Spec: api.PodSpec{NodeName: "node-a", Containers: []api.Container{{Name: "c", Image: "x", Ports: ports}}},
		Status: api.PodStatus{Phase: api.PodRunning, PodIP: ip, PodIPs: []api.PodIP{{IP: ip}},
			Conditions: []api.PodCondition{{Type: api.PodReady, Status: status, LastTransitionTime: api.Time{Time: t0.Add(time.Minute)}}}},
	}
}

// summary renders subsets as "ready|notready|ports" per subset.
func summary(ss []api.EndpointSubset) string {
	out := ""
	for _, s := range ss {
		r, n, p := "", "", ""
		for _, a := range s.Addresses {
			r += a.IP + ","
		}
		for _, a := range s.NotReadyAddresses {
			n += a.IP + ","
		}
		for _, x := range s.Ports {
			p += fmt.Sprintf("%s:%d/%s,", x.Name, x.Port, x.Protocol)
		}
		out += "[" + r + "|" + n + "|" + p + "]"
	}
	return out
}

func TestReconcileSubsets(t *testing.T) {
	named := func(n int32) api.ContainerPort {
		return api.ContainerPort{Name: "web", ContainerPort: n, Protocol: api.ProtocolTCP}
	}
	terminating := pod("p-term", "10.244.0.9", true)
	now := api.Time{Time: t0}
	terminating.DeletionTimestamp = &now
	succeeded := pod("p-done", "10.244.0.8", false)
	succeeded.Status.Phase = api.PodSucceeded
	noIP := pod("p-noip", "", false)
	noIP.Status.PodIPs = nil
	headless := service("web")
	headless.Spec.ClusterIP = api.ClusterIPNone
	publish := service("web", httpPort(api.FromInt32(8080)))
	publish.Spec.PublishNotReadyAddresses = true
	for _, tc := range []struct {
		name string
		svc  *api.Service
		pods []*api.Pod
		want string
	}{
		{"ready and not ready", service("web", httpPort(api.FromInt32(8080))),
			[]*api.Pod{pod("p1", "10.244.0.6", true), pod("p2", "10.244.0.5", true), pod("p3", "10.244.0.7", false)},
			"[10.244.0.5,10.244.0.6,|10.244.0.7,|http:8080/TCP,]"},
		{"publishNotReadyAddresses puts all in addresses", publish,
			[]*api.Pod{pod("p1", "10.244.0.6", true), pod("p3", "10.244.0.7", false), terminating},
			"[10.244.0.6,10.244.0.7,10.244.0.9,||http:8080/TCP,]"},
		{"terminating, succeeded and IP-less pods are left out", service("web", httpPort(api.FromInt32(8080))),
			[]*api.Pod{pod("p1", "10.244.0.6", true), terminating, succeeded, noIP},
			"[10.244.0.6,||http:8080/TCP,]"},
		{"targetPort unset is the port", service("web", httpPort(api.IntOrString{})),
			[]*api.Pod{pod("p1", "10.244.0.6", true)}, "[10.244.0.6,||http:80/TCP,]"},
		{"named port resolved per pod: different numbers, different subsets", service("web", httpPort(api.FromString("web"))),
			[]*api.Pod{pod("p1", "10.244.0.6", true, named(8080)), pod("p2", "10.244.0.5", true, named(9090)), pod("p3", "10.244.0.7", false, named(8080))},
			"[10.244.0.6,|10.244.0.7,|http:8080/TCP,][10.244.0.5,||http:9090/TCP,]"},
		{"named port missing on a pod leaves it out", service("web", httpPort(api.FromString("web"))),
			[]*api.Pod{pod("p1", "10.244.0.6", true, named(8080)), pod("p2", "10.244.0.5", true)},
			"[10.244.0.6,||http:8080/TCP,]"},
		{"two ports share a subset", service("web", httpPort(api.FromInt32(8080)), api.ServicePort{Name: "dns", Port: 53, Protocol: api.ProtocolUDP}),
			[]*api.Pod{pod("p1", "10.244.0.6", true)}, "[10.244.0.6,||dns:53/UDP,http:8080/TCP,]"},
		{"headless without ports", headless, []*api.Pod{pod("p1", "10.244.0.6", true), pod("p2", "10.244.0.5", false)},
			"[10.244.0.6,|10.244.0.5,|]"},
		{"cluster IP service without ports", service("web"), []*api.Pod{pod("p1", "10.244.0.6", true)}, ""},
		{"no pods", service("web", httpPort(api.FromInt32(8080))), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := endpoints.Reconcile(endpoints.Input{Service: tc.svc, Pods: tc.pods})
			if plan.Create == nil {
				t.Fatalf("no create: %+v", plan)
			}
			if got := summary(plan.Create.Subsets); got != tc.want {
				t.Fatalf("subsets\n got %s\nwant %s", got, tc.want)
			}
			if err := api.ValidateEndpoints(plan.Create); len(err) > 0 && len(plan.Create.Subsets) > 0 {
				t.Fatalf("invalid: %v", err)
			}
		})
	}
}

func TestReconcileMetadata(t *testing.T) {
	svc := service("web", httpPort(api.FromInt32(8080)))
	p := pod("p1", "10.244.0.6", true)
	p.Spec.Hostname, p.Spec.Subdomain = "web-0", "web"
	plan := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: []*api.Pod{p}})
	ep := plan.Create
	if ep.Name != "web" || ep.Namespace != "default" {
		t.Fatalf("name %s/%s", ep.Namespace, ep.Name)
	}
	if ep.Labels["team"] != "a" || ep.Labels[api.LabelSkipMirror] != "true" || len(ep.Labels) != 2 {
		t.Fatalf("labels %v", ep.Labels)
	}
	a := ep.Subsets[0].Addresses[0]
	if a.Hostname != "web-0" || a.NodeName == nil || *a.NodeName != "node-a" ||
		a.TargetRef == nil || *a.TargetRef != (api.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p1", UID: "uid-p1"}) {
		t.Fatalf("address %+v", a)
	}
	// The first write's trigger is the Service's creation (earlier than
	// the pod's Ready transition).
	if got := ep.Annotations[api.EndpointsLastChangeTriggerTimeAnnotation]; got != t0.Format(time.RFC3339Nano) {
		t.Fatalf("trigger time %q", got)
	}
	if _, ok := ep.Annotations[api.EndpointsOverCapacityAnnotation]; ok {
		t.Fatal("over-capacity on a small Endpoints")
	}

	// Stored as is: nothing to do, even with a pod resourceVersion in a
	// targetRef.
	stored := api.DeepCopy(ep)
	stored.ResourceVersion = "7"
	stored.Subsets[0].Addresses[0].TargetRef.ResourceVersion = "3"
	if plan := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: []*api.Pod{p}, Current: stored}); !plan.Empty() {
		t.Fatalf("no-op wrote %+v", plan)
	}

	// The pod turns not ready: an update whose trigger is that transition.
	p2 := api.DeepCopy(p)
	p2.Status.Conditions[0].Status = api.ConditionFalse
	p2.Status.Conditions[0].LastTransitionTime = api.Time{Time: t0.Add(time.Hour)}
	stored.Annotations["keep"] = "me"
	plan = endpoints.Reconcile(endpoints.Input{Service: svc, Pods: []*api.Pod{p2}, Current: stored})
	if plan.Update == nil || plan.Update.ResourceVersion != "7" {
		t.Fatalf("plan %+v", plan)
	}
	if got := summary(plan.Update.Subsets); got != "[|10.244.0.6,|http:8080/TCP,]" {
		t.Fatalf("subsets %s", got)
	}
	if got := plan.Update.Annotations[api.EndpointsLastChangeTriggerTimeAnnotation]; got != t0.Add(time.Hour).Format(time.RFC3339Nano) {
		t.Fatalf("trigger %q", got)
	}
	if plan.Update.Annotations["keep"] != "me" {
		t.Fatal("an annotation of someone else was dropped")
	}

	// Headless: the headless label.
	h := service("db")
	h.Spec.ClusterIP = api.ClusterIPNone
	plan = endpoints.Reconcile(endpoints.Input{Service: h})
	if v, ok := plan.Create.Labels[api.LabelHeadlessService]; !ok || v != "" {
		t.Fatalf("headless labels %v", plan.Create.Labels)
	}
	// A Service label change is an update.
	cur := plan.Create
	h.Labels = map[string]string{"team": "b"}
	if plan = endpoints.Reconcile(endpoints.Input{Service: h, Current: cur}); plan.Update == nil || plan.Update.Labels["team"] != "b" {
		t.Fatalf("label change: %+v", plan)
	}
}

func TestReconcileTruncates(t *testing.T) {
	svc := service("big", httpPort(api.FromInt32(8080)))
	mk := func(ready, notReady int) []*api.Pod {
		var pods []*api.Pod
		for i := range ready + notReady {
			pods = append(pods, pod(fmt.Sprintf("p%04d", i), fmt.Sprintf("10.%d.%d.%d", 1+i/65536, (i/256)%256, i%256+0), i < ready))
		}
		return pods
	}
	count := func(ep *api.Endpoints) (r, n int) {
		for _, s := range ep.Subsets {
			r += len(s.Addresses)
			n += len(s.NotReadyAddresses)
		}
		return
	}
	for _, tc := range []struct {
		name            string
		ready, notReady int
		wantR, wantN    int
		truncated       bool
	}{
		{"exactly 1000", 600, 400, 600, 400, false},
		{"not ready cut first", 800, 500, 800, 200, true},
		{"ready beyond 1000: only ready kept", 1200, 300, 1000, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: mk(tc.ready, tc.notReady)})
			r, n := count(plan.Create)
			if r != tc.wantR || n != tc.wantN {
				t.Fatalf("ready %d not ready %d, want %d %d", r, n, tc.wantR, tc.wantN)
			}
			if got := plan.Create.Annotations[api.EndpointsOverCapacityAnnotation] == "truncated"; got != tc.truncated {
				t.Fatalf("over-capacity %v, want %v", got, tc.truncated)
			}
			// Written as is, the next sync does nothing; once it fits the
			// annotation goes.
			cur := plan.Create
			cur.ResourceVersion = "1"
			if p := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: mk(tc.ready, tc.notReady), Current: cur}); !p.Empty() {
				t.Fatal("a truncated Endpoints is rewritten at every sync")
			}
			if tc.truncated {
				p := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: mk(10, 0), Current: cur})
				if p.Update == nil || p.Update.Annotations[api.EndpointsOverCapacityAnnotation] != "" {
					t.Fatalf("annotation kept: %+v", p.Update)
				}
			}
		})
	}
}
