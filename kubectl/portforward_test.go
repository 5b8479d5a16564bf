package kubectl

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// TestForwardPorts: kubectl's port rules for pods and Services.
func TestForwardPorts(t *testing.T) {
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.PodSpec{Containers: []api.Container{
		{Name: "c", Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}}},
	}}}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []api.ServicePort{
		{Name: "web", Port: 80, TargetPort: api.FromString("http")},
		{Name: "m", Port: 9100, TargetPort: api.FromInt32(9090)},
		{Name: "same", Port: 7000},
	}}}
	for _, c := range []struct {
		svc   *api.Service
		specs []string
		want  []forwardPort
		err   string
	}{
		{nil, []string{"8080", "1234:8080", ":http", "0:metrics"}, []forwardPort{{8080, 8080}, {1234, 8080}, {0, 8080}, {0, 9090}}, ""},
		{nil, []string{"http"}, []forwardPort{{8080, 8080}}, ""},
		{nil, []string{"nope"}, nil, "Pod 'web' does not have a named port 'nope'"},
		{nil, []string{"x:80"}, nil, "error parsing local port 'x'"},
		{nil, []string{"0"}, nil, "remote port must be > 0"},
		// Service: LOCAL defaults to the service port, REMOTE is the targetPort.
		{svc, []string{"80", "8000:80", "web", ":m", "7000"}, []forwardPort{{80, 8080}, {8000, 8080}, {80, 8080}, {0, 9090}, {7000, 7000}}, ""},
		{svc, []string{"81"}, nil, "Service web does not have a service port 81"},
		{svc, []string{"nope"}, nil, "Service 'web' does not have a named port 'nope'"},
	} {
		got, err := forwardPorts(c.specs, c.svc, pod)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.specs, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v (svc %v): %v %v, want %v", c.specs, c.svc != nil, got, err, c.want)
		}
	}
}

func TestFirstActivePod(t *testing.T) {
	now := time.Now()
	mk := func(name string, phase string, ready bool, age time.Duration) api.Pod {
		p := api.Pod{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.NewTime(now.Add(-age))}, Status: api.PodStatus{Phase: phase}}
		if ready {
			p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}
		}
		return p
	}
	pods := []api.Pod{mk("pending", api.PodPending, false, time.Hour), mk("running", api.PodRunning, false, time.Hour),
		mk("ready-new", api.PodRunning, true, time.Minute), mk("ready-old", api.PodRunning, true, time.Hour)}
	if got := firstActivePod(pods).Name; got != "ready-old" {
		t.Errorf("picked %s", got)
	}
	if got := firstActivePod(pods[:2]).Name; got != "running" {
		t.Errorf("picked %s", got)
	}
}
