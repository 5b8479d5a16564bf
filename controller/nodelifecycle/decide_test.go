package nodelifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const (
	grace = 40 * time.Second
	evict = 5 * time.Minute
)

func node(status api.ConditionStatus, beat time.Time, taints ...api.Taint) *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", CreationTimestamp: api.NewTime(t0.Add(-time.Hour))}}
	n.Spec.Taints = taints
	if status != "" {
		n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: status,
			LastHeartbeatTime: api.NewTime(beat), LastTransitionTime: api.NewTime(t0.Add(-time.Hour)), Reason: "KubeletReady"}}
	}
	return n
}

func lease(renew time.Time) *api.Lease {
	return &api.Lease{ObjectMeta: api.ObjectMeta{Name: "n1", Namespace: LeaseNamespace},
		Spec: api.LeaseSpec{RenewTime: &api.MicroTime{Time: renew}}}
}

func pod(name string, ready api.ConditionStatus, owned bool) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + name}, Spec: api.PodSpec{NodeName: "n1"}}
	if owned {
		t := true
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "s", UID: "s-uid", Controller: &t}}
	}
	if ready != "" {
		p.Status.Conditions = []api.PodCondition{{Type: api.ContainersReady, Status: ready}, {Type: api.PodReady, Status: ready}}
	}
	return p
}

var (
	unreachable = api.Taint{Key: TaintUnreachable, Effect: api.TaintEffectNoSchedule}
	notReady    = api.Taint{Key: TaintNotReady, Effect: api.TaintEffectNoSchedule}
	dedicated   = api.Taint{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoSchedule}
)

func names(ps []*api.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func taintKeys(ts []api.Taint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Key+":"+t.Effect)
	}
	return out
}

// daemonPod tolerates unreachable:NoExecute forever, as DaemonSet pods do:
// never evicted.
var daemonPod = func() *api.Pod {
	p := pod("daemon", api.ConditionFalse, true)
	p.Spec.Tolerations = []api.Toleration{{Key: TaintUnreachable, Operator: "Exists", Effect: api.TaintEffectNoExecute}}
	return p
}()

func TestDecide(t *testing.T) {
	forceDeleted := pod("gone", api.ConditionFalse, true)
	forceDeleted.DeletionTimestamp = &api.Time{Time: t0}
	forceDeleted.DeletionGracePeriodSeconds = new(int64)

	tests := []struct {
		name string
		in   input
		// Expected plan.
		readyStatus   api.ConditionStatus // "" = no status write
		readyReason   string
		becameNR      bool
		taints        []string // nil with updateTaints false = untouched
		updateTaints  bool
		markNotReady  []string
		evict         []string
		requeue       time.Duration
		probe         time.Time
		notReadySince time.Time
	}{
		{
			name:    "first sight of a Ready node: grace starts now",
			in:      input{node: node(api.ConditionTrue, t0.Add(-10*time.Minute)), now: t0},
			requeue: grace, probe: t0,
		},
		{
			name: "lease renewed: heartbeat",
			in: input{node: node(api.ConditionTrue, t0.Add(-10*time.Minute)), lease: lease(t0.Add(-time.Second)), now: t0,
				prev: health{probe: t0.Add(-30 * time.Second), leaseRenew: t0.Add(-31 * time.Second), statusBeat: t0.Add(-10 * time.Minute)}},
			requeue: grace, probe: t0,
		},
		{
			name: "node status heartbeat: heartbeat",
			in: input{node: node(api.ConditionTrue, t0.Add(-2*time.Second)), now: t0,
				prev: health{probe: t0.Add(-39 * time.Second), statusBeat: t0.Add(-39 * time.Second)}},
			requeue: grace, probe: t0,
		},
		{
			name: "silent less than the grace period: wait for the rest",
			in: input{node: node(api.ConditionTrue, t0.Add(-time.Hour)), lease: lease(t0.Add(-time.Hour)), now: t0,
				prev: health{probe: t0.Add(-30 * time.Second), leaseRenew: t0.Add(-time.Hour), statusBeat: t0.Add(-time.Hour)}},
			requeue: 10 * time.Second, probe: t0.Add(-30 * time.Second),
		},
		{
			name: "silent for the grace period: Unknown, unreachable taint, pods not ready",
			in: input{node: node(api.ConditionTrue, t0.Add(-time.Hour), dedicated), lease: lease(t0.Add(-time.Hour)), now: t0,
				pods: []*api.Pod{pod("a", api.ConditionTrue, true), pod("b", api.ConditionTrue, false), pod("c", api.ConditionFalse, true), pod("d", "", true)},
				prev: health{probe: t0.Add(-grace), leaseRenew: t0.Add(-time.Hour), statusBeat: t0.Add(-time.Hour)}},
			readyStatus: api.ConditionUnknown, readyReason: ReasonNodeStatusUnknown, becameNR: true,
			taints: []string{"dedicated:NoSchedule", TaintUnreachable + ":NoSchedule"}, updateTaints: true,
			markNotReady: []string{"a", "b"},
			requeue:      evict, probe: t0.Add(-grace), notReadySince: t0,
		},
		{
			name: "a lease that goes backwards is no heartbeat",
			in: input{node: node(api.ConditionTrue, t0.Add(-time.Hour)), lease: lease(t0.Add(-2 * time.Hour)), now: t0,
				prev: health{probe: t0.Add(-grace), leaseRenew: t0.Add(-time.Hour), statusBeat: t0.Add(-time.Hour)}},
			readyStatus: api.ConditionUnknown, readyReason: ReasonNodeStatusUnknown, becameNR: true,
			taints: []string{TaintUnreachable + ":NoSchedule"}, updateTaints: true,
			requeue: evict, probe: t0.Add(-grace), notReadySince: t0,
		},
		{
			name: "already Unknown and tainted, before the eviction timeout: nothing to write",
			in: input{node: node(api.ConditionUnknown, t0.Add(-time.Hour), unreachable), now: t0,
				pods: []*api.Pod{pod("a", api.ConditionFalse, true)},
				prev: health{probe: t0.Add(-2 * time.Minute), statusBeat: t0.Add(-time.Hour), notReadySince: t0.Add(-time.Minute)}},
			requeue: 4 * time.Minute, probe: t0.Add(-2 * time.Minute), notReadySince: t0.Add(-time.Minute),
		},
		{
			name: "a new pod on an Unknown node is marked not ready",
			in: input{node: node(api.ConditionUnknown, t0.Add(-time.Hour), unreachable), now: t0,
				pods: []*api.Pod{pod("a", api.ConditionFalse, true), pod("new", api.ConditionTrue, true)},
				prev: health{probe: t0.Add(-2 * time.Minute), statusBeat: t0.Add(-time.Hour), notReadySince: t0.Add(-time.Minute)}},
			markNotReady: []string{"new"},
			requeue:      4 * time.Minute, probe: t0.Add(-2 * time.Minute), notReadySince: t0.Add(-time.Minute),
		},
		{
			name: "not ready for the eviction timeout: controller-owned pods evicted, bare pods stay",
			in: input{node: node(api.ConditionUnknown, t0.Add(-time.Hour), unreachable), now: t0,
				pods: []*api.Pod{pod("owned", api.ConditionFalse, true), pod("bare", api.ConditionFalse, false),
					pod("bare-ready", api.ConditionTrue, false), forceDeleted, daemonPod},
				prev: health{probe: t0.Add(-10 * time.Minute), statusBeat: t0.Add(-time.Hour), notReadySince: t0.Add(-evict)}},
			markNotReady: []string{"bare-ready"}, evict: []string{"owned"},
			probe: t0.Add(-10 * time.Minute), notReadySince: t0.Add(-evict),
		},
		{
			name: "first sight of an Unknown node: eviction timer starts now",
			in: input{node: node(api.ConditionUnknown, t0.Add(-time.Hour), unreachable), now: t0,
				pods: []*api.Pod{pod("owned", api.ConditionFalse, true)}},
			requeue: evict, probe: t0, notReadySince: t0,
		},
		{
			name: "node reports Ready=False: not-ready taint, pods not ready, eviction timer",
			in: input{node: node(api.ConditionFalse, t0.Add(-time.Second)), now: t0,
				pods: []*api.Pod{pod("a", api.ConditionTrue, true)},
				prev: health{probe: t0.Add(-10 * time.Second), statusBeat: t0.Add(-10 * time.Second)}},
			taints: []string{TaintNotReady + ":NoSchedule"}, updateTaints: true,
			markNotReady: []string{"a"},
			requeue:      evict, probe: t0, notReadySince: t0,
		},
		{
			name: "Ready again: our taints go, other taints stay, timer resets",
			in: input{node: node(api.ConditionTrue, t0, dedicated, unreachable, notReady), now: t0,
				pods: []*api.Pod{pod("a", api.ConditionFalse, true)},
				prev: health{probe: t0.Add(-10 * time.Minute), statusBeat: t0.Add(-time.Hour), notReadySince: t0.Add(-4 * time.Minute)}},
			taints: []string{"dedicated:NoSchedule"}, updateTaints: true,
			requeue: grace, probe: t0,
		},
		{
			name: "Ready and not yet silent but still tainted (lease-only heartbeat)",
			in: input{node: node(api.ConditionTrue, t0.Add(-time.Hour), unreachable), lease: lease(t0), now: t0,
				prev: health{probe: t0.Add(-time.Minute), leaseRenew: t0.Add(-time.Minute), statusBeat: t0.Add(-time.Hour)}},
			taints: nil, updateTaints: true,
			requeue: grace, probe: t0,
		},
		{
			name:    "no Ready condition within the grace period: wait",
			in:      input{node: node("", time.Time{}), now: t0, prev: health{probe: t0.Add(-10 * time.Second)}},
			requeue: 30 * time.Second, probe: t0.Add(-10 * time.Second),
		},
		{
			name:        "no Ready condition after the grace period: NodeStatusNeverUpdated",
			in:          input{node: node("", time.Time{}), now: t0, prev: health{probe: t0.Add(-grace)}},
			readyStatus: api.ConditionUnknown, readyReason: ReasonNodeStatusNeverUpdated,
			taints: []string{TaintUnreachable + ":NoSchedule"}, updateTaints: true,
			requeue: evict, probe: t0.Add(-grace), notReadySince: t0,
		},
		{
			name: "silent node that reported Ready=False becomes Unknown and swaps taints",
			in: input{node: node(api.ConditionFalse, t0.Add(-time.Hour), notReady), now: t0,
				prev: health{probe: t0.Add(-grace), statusBeat: t0.Add(-time.Hour), notReadySince: t0.Add(-time.Minute)}},
			readyStatus: api.ConditionUnknown, readyReason: ReasonNodeStatusUnknown,
			taints: []string{TaintUnreachable + ":NoSchedule"}, updateTaints: true,
			requeue: 4 * time.Minute, probe: t0.Add(-grace), notReadySince: t0.Add(-time.Minute),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.grace, in.evict = grace, evict
			p := decide(in)
			gotStatus, gotReason := api.ConditionStatus(""), ""
			if p.ready != nil {
				gotStatus, gotReason = p.ready.Status, p.ready.Reason
				if p.ready.LastTransitionTime.Time != t0 {
					t.Errorf("Ready lastTransitionTime %v, want now", p.ready.LastTransitionTime)
				}
				if old := readyCondition(in.node); old != nil && p.ready.LastHeartbeatTime != old.LastHeartbeatTime {
					t.Errorf("Ready lastHeartbeatTime changed to %v", p.ready.LastHeartbeatTime)
				}
			}
			if gotStatus != tt.readyStatus || gotReason != tt.readyReason || p.becameNotReady != tt.becameNR {
				t.Errorf("ready write %q/%q became %v, want %q/%q %v", gotStatus, gotReason, p.becameNotReady, tt.readyStatus, tt.readyReason, tt.becameNR)
			}
			if p.updateTaints != tt.updateTaints || !slices.Equal(taintKeys(p.taints), tt.taints) {
				t.Errorf("taints %v (update %v), want %v (update %v)", taintKeys(p.taints), p.updateTaints, tt.taints, tt.updateTaints)
			}
			if !slices.Equal(names(p.markNotReady), tt.markNotReady) {
				t.Errorf("markNotReady %v, want %v", names(p.markNotReady), tt.markNotReady)
			}
			if !slices.Equal(names(p.evict), tt.evict) {
				t.Errorf("evict %v, want %v", names(p.evict), tt.evict)
			}
			if p.requeueAfter != tt.requeue {
				t.Errorf("requeueAfter %v, want %v", p.requeueAfter, tt.requeue)
			}
			if !p.health.probe.Equal(tt.probe) || !p.health.notReadySince.Equal(tt.notReadySince) {
				t.Errorf("health probe %v notReadySince %v, want %v %v", p.health.probe, p.health.notReadySince, tt.probe, tt.notReadySince)
			}
		})
	}
}

// TestTimeline drives decide through a node's life with a fake clock, as
// the controller does: heartbeats, silence, eviction, recovery.
func TestTimeline(t *testing.T) {
	now := t0
	var h health
	n := node(api.ConditionTrue, now)
	l := lease(now)
	pods := []*api.Pod{pod("owned", api.ConditionTrue, true), pod("bare", api.ConditionTrue, false)}
	step := func() plan {
		p := decide(input{node: n, lease: l, prev: h, pods: pods, now: now, grace: grace, evict: evict})
		h = p.health
		if p.ready != nil {
			setNodeCondition(&n.Status, *p.ready)
		}
		if p.updateTaints {
			n.Spec.Taints = p.taints
		}
		for _, pp := range p.markNotReady {
			markPodNotReady(&pp.Status, now)
		}
		return p
	}
	// Lease renewed every 10s for a minute: nothing happens.
	for range 6 {
		now = now.Add(10 * time.Second)
		l = lease(now)
		if p := step(); p.ready != nil || p.updateTaints || len(p.markNotReady)+len(p.evict) > 0 {
			t.Fatalf("healthy node acted on: %+v", p)
		}
	}
	// Silence: at 39s nothing, at 40s Unknown.
	last := now
	now = last.Add(grace - time.Second)
	if p := step(); p.ready != nil {
		t.Fatal("Unknown before the grace period")
	}
	now = last.Add(grace)
	if p := step(); p.ready == nil || !p.becameNotReady || len(p.markNotReady) != 2 {
		t.Fatalf("at the grace period: %+v", p)
	}
	if api.IsPodReady(pods[0]) || api.IsPodReady(pods[1]) {
		t.Fatal("pods still ready")
	}
	unknownAt := now
	now = unknownAt.Add(evict - time.Second)
	if p := step(); len(p.evict) != 0 || p.ready != nil || p.updateTaints {
		t.Fatalf("acted before the eviction timeout: %+v", p)
	}
	now = unknownAt.Add(evict)
	if p := step(); !slices.Equal(names(p.evict), []string{"owned"}) {
		t.Fatalf("eviction: %v", names(p.evict))
	}
	pods = pods[1:] // the owned pod is gone
	// Heartbeats resume and the agent reports Ready.
	now = now.Add(time.Second)
	l = lease(now)
	setNodeCondition(&n.Status, api.NodeCondition{Type: api.NodeReady, Status: api.ConditionTrue, LastHeartbeatTime: api.NewTime(now)})
	if p := step(); !p.updateTaints || len(p.taints) != 0 {
		t.Fatalf("recovery did not clear the taint: %+v", p)
	}
	if !h.notReadySince.IsZero() {
		t.Fatal("eviction timer not reset")
	}
}
