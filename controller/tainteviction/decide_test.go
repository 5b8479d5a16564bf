package tainteviction

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	secs := func(s int64) *int64 { return &s }
	unreachable := api.Taint{Key: "node.kubernetes.io/unreachable", Effect: api.TaintEffectNoExecute}
	dedicated := api.Taint{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoExecute}
	pod := func(name string, tols ...api.Toleration) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + name}, Spec: api.PodSpec{Tolerations: tols}}
	}
	tests := []struct {
		name   string
		taints []api.Taint
		pods   []*api.Pod
		since  map[string]time.Time
		evict  []string
		next   time.Time
	}{
		{name: "no NoExecute taint evicts nothing", taints: []api.Taint{{Key: "k", Effect: api.TaintEffectNoSchedule}},
			pods: []*api.Pod{pod("p")}},
		{name: "untolerated NoExecute taint evicts at once", taints: []api.Taint{unreachable}, pods: []*api.Pod{pod("p")}, evict: []string{"p"}},
		{name: "tolerated without tolerationSeconds stays", taints: []api.Taint{unreachable},
			pods: []*api.Pod{pod("p", api.Toleration{Key: unreachable.Key, Operator: "Exists", Effect: api.TaintEffectNoExecute})}},
		{name: "tolerationSeconds not yet passed: a deadline", taints: []api.Taint{unreachable},
			pods:  []*api.Pod{pod("p", api.Toleration{Key: unreachable.Key, Operator: "Exists", Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(300)})},
			since: map[string]time.Time{"uid-p": now.Add(-100 * time.Second)}, next: now.Add(200 * time.Second)},
		{name: "first seen now: the deadline is now + tolerationSeconds", taints: []api.Taint{unreachable},
			pods: []*api.Pod{pod("p", api.Toleration{Key: unreachable.Key, Operator: "Exists", Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(300)})},
			next: now.Add(300 * time.Second)},
		{name: "tolerationSeconds passed evicts", taints: []api.Taint{unreachable},
			pods:  []*api.Pod{pod("p", api.Toleration{Key: unreachable.Key, Operator: "Exists", Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(300)})},
			since: map[string]time.Time{"uid-p": now.Add(-300 * time.Second)}, evict: []string{"p"}},
		{name: "negative tolerationSeconds counts as 0", taints: []api.Taint{unreachable},
			pods: []*api.Pod{pod("p", api.Toleration{Operator: "Exists", TolerationSeconds: secs(-5)})}, evict: []string{"p"}},
		{name: "the smallest tolerationSeconds of the tolerations used wins", taints: []api.Taint{unreachable, dedicated},
			pods: []*api.Pod{pod("p",
				api.Toleration{Key: unreachable.Key, Operator: "Exists", TolerationSeconds: secs(600)},
				api.Toleration{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(60)},
				api.Toleration{Key: "other", Operator: "Exists", TolerationSeconds: secs(1)})},
			next: now.Add(60 * time.Second)},
		{name: "tolerating one taint of two is not enough", taints: []api.Taint{unreachable, dedicated},
			pods: []*api.Pod{pod("p", api.Toleration{Key: unreachable.Key, Operator: "Exists"})}, evict: []string{"p"}},
		{name: "a toleration for another value does not tolerate", taints: []api.Taint{dedicated},
			pods: []*api.Pod{pod("p", api.Toleration{Key: "dedicated", Value: "web", Effect: api.TaintEffectNoExecute})}, evict: []string{"p"}},
		{name: "a NoSchedule toleration does not tolerate NoExecute", taints: []api.Taint{dedicated},
			pods: []*api.Pod{pod("p", api.Toleration{Key: "dedicated", Operator: "Exists", Effect: api.TaintEffectNoSchedule})}, evict: []string{"p"}},
		{name: "terminal and terminating pods are left alone", taints: []api.Taint{unreachable},
			pods: []*api.Pod{
				func() *api.Pod { p := pod("done"); p.Status.Phase = api.PodSucceeded; return p }(),
				func() *api.Pod { p := pod("going"); ts := api.NewTime(now); p.DeletionTimestamp = &ts; return p }(),
				pod("live"),
			}, evict: []string{"live"}},
		{name: "the earliest deadline of several pods", taints: []api.Taint{unreachable},
			pods: []*api.Pod{
				pod("a", api.Toleration{Operator: "Exists", TolerationSeconds: secs(30)}),
				pod("b", api.Toleration{Operator: "Exists", TolerationSeconds: secs(10)}),
			}, next: now.Add(10 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Decide(tt.taints, tt.pods, tt.since, now)
			var got []string
			for _, e := range p.Evict {
				got = append(got, e.Name)
			}
			if len(got) != len(tt.evict) {
				t.Fatalf("evict %v, want %v", got, tt.evict)
			}
			for i := range got {
				if got[i] != tt.evict[i] {
					t.Fatalf("evict %v, want %v", got, tt.evict)
				}
			}
			if !p.Next.Equal(tt.next) {
				t.Fatalf("next %v, want %v", p.Next, tt.next)
			}
		})
	}
}
