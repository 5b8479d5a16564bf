package deployment

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// pod builds a podState: by default scheduled, Running, Ready and
// available since t0, created at t0, of hash "new" (revision 2).
func pod(name string, opts ...func(*podState)) podState {
	p := podState{name: name, uid: "uid-" + name, hash: "new", revision: 2, created: t0, scheduled: true,
		phase: api.PodRunning, ready: true, readySince: t0, available: true}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func old(rev int64) func(*podState) {
	return func(p *podState) { p.hash, p.revision = fmt.Sprintf("old%d", rev), rev }
}
func notReady(p *podState)     { p.ready, p.available, p.readySince = false, false, time.Time{} }
func notAvailable(p *podState) { p.available = false }
func pending(p *podState)      { notReady(p); p.phase = api.PodPending }
func unscheduled(p *podState)  { pending(p); p.scheduled = false }
func terminating(p *podState)  { p.terminating = true }
func createdAt(sec int) func(*podState) {
	return func(p *podState) { p.created = t0.Add(time.Duration(sec) * time.Second) }
}
func readyAt(sec int) func(*podState) {
	return func(p *podState) { p.readySince = t0.Add(time.Duration(sec) * time.Second) }
}
func restarts(n int32) func(*podState) { return func(p *podState) { p.restarts = n } }

// oldPods builds n available pods of revision rev named prefix-i, created
// one second apart.
func oldPods(prefix string, rev int64, n int) []podState {
	out := make([]podState, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("%s-%d", prefix, i), old(rev), createdAt(i), readyAt(i))
	}
	return out
}

func cat(groups ...[]podState) []podState { return slices.Concat(groups...) }

func rolling(surge, unavail int32) planInput {
	return planInput{bounds: bounds{surge: surge, unavailable: unavail}, newHash: "new"}
}

func describe(p plan) string {
	var b strings.Builder
	if p.create != nil {
		fmt.Fprintf(&b, "create %d %s", p.create.count, p.create.hash)
	}
	if len(p.delete) > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "delete %s", strings.Join(p.delete, ","))
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

func TestComputePlan(t *testing.T) {
	with := func(in planInput, replicas int32, pods ...[]podState) planInput {
		in.replicas = replicas
		in.pods = cat(pods...)
		return in
	}
	recreate := planInput{recreate: true, newHash: "new"}
	paused := planInput{paused: true, newHash: "new", bounds: bounds{surge: 1, unavailable: 1}}
	cases := []struct {
		name string
		in   planInput
		want string
	}{
		// Scaling.
		{"scale up from zero", with(rolling(1, 1), 3), "create 3 new"},
		{"scale up ignores surge without old pods", with(rolling(0, 1), 5, []podState{pod("a"), pod("b")}), "create 3 new"},
		{"steady", with(rolling(1, 1), 2, []podState{pod("a"), pod("b")}), "nothing"},
		{"scale to zero", with(rolling(1, 1), 0, []podState{pod("a"), pod("b")}), "delete b,a"},
		{"scale down order: unscheduled, pending, not ready, then ready newest first",
			with(rolling(1, 1), 2, []podState{
				pod("ready-old", createdAt(0), readyAt(10)),
				pod("ready-recent", createdAt(1), readyAt(20)),
				pod("not-ready", notReady),
				pod("pending", pending),
				pod("unscheduled", unscheduled),
			}), "delete unscheduled,pending,not-ready"},
		{"scale down takes the most recently ready first",
			with(rolling(1, 1), 1, []podState{
				pod("a", createdAt(0), readyAt(10)),
				pod("b", createdAt(1), readyAt(30)),
				pod("c", createdAt(2), readyAt(20)),
			}), "delete b,c"},
		{"scale down: same ready time, more restarts first, then newest",
			with(rolling(1, 1), 1, []podState{
				pod("a", createdAt(5)),
				pod("b", createdAt(9)),
				pod("c", createdAt(1), restarts(3)),
			}), "delete c,b"},
		{"unknown phase goes before running",
			with(rolling(1, 1), 1, []podState{pod("run"), pod("unk", func(p *podState) { p.phase = api.PodUnknown })}),
			"delete unk"},
		{"terminating pods are neither counted nor deleted",
			with(rolling(1, 1), 2, []podState{pod("a"), pod("b"), pod("gone", terminating)}), "nothing"},
		{"terminating pods are replaced",
			with(rolling(1, 1), 2, []podState{pod("a"), pod("gone", terminating)}), "create 1 new"},
		{"a burst is capped", with(rolling(1, 1), 2000), "create 500 new"},

		// Rolling updates.
		{"rollout starts with a surge pod", with(rolling(1, 1), 4, oldPods("o", 1, 4)), "create 1 new"},
		{"surge used: an old pod goes while the new one is not ready",
			with(rolling(1, 1), 4, oldPods("o", 1, 4), []podState{pod("n0", notReady)}), "delete o-3"},
		{"no surge: an old pod goes first", with(rolling(0, 1), 4, oldPods("o", 1, 4)), "delete o-3"},
		{"no surge: replacement after the delete", with(rolling(0, 1), 4, oldPods("o", 1, 3)), "create 1 new"},
		{"no surge: waits while the new pod is not ready",
			with(rolling(0, 1), 4, oldPods("o", 1, 3), []podState{pod("n0", notReady)}), "nothing"},
		{"no surge: next old pod once the new one is available",
			with(rolling(0, 1), 4, oldPods("o", 1, 3), []podState{pod("n0")}), "delete o-2"},
		{"no unavailability: surge first", with(rolling(1, 0), 4, oldPods("o", 1, 4)), "create 1 new"},
		{"no unavailability: waits for the new pod",
			with(rolling(1, 0), 4, oldPods("o", 1, 4), []podState{pod("n0", notReady)}), "nothing"},
		{"no unavailability: old pod goes when the new one is available",
			with(rolling(1, 0), 4, oldPods("o", 1, 4), []podState{pod("n0")}), "delete o-3"},
		{"large surge creates all new pods at once", with(rolling(4, 0), 4, oldPods("o", 1, 4)), "create 4 new"},
		{"large unavailability deletes many old pods",
			with(rolling(0, 3), 4, oldPods("o", 1, 4)), "delete o-3,o-2,o-1"},
		{"25%/25% of 10: surge 3 then delete 2",
			with(rolling(3, 2), 10, oldPods("o", 1, 10), []podState{pod("n0", notReady), pod("n1", notReady), pod("n2", notReady)}),
			"delete o-9,o-8"},
		{"unhealthy old pods go first, at no cost",
			with(rolling(1, 1), 4, []podState{
				pod("o-ok1", old(1)), pod("o-ok2", old(1)), pod("o-ok3", old(1)),
				pod("o-sick", old(1), notReady), pod("n0", notReady),
			}), "delete o-sick"},
		{"unhealthy cleanup is bounded by maxScaledDown",
			with(rolling(1, 1), 4, []podState{
				pod("o-ok1", old(1)), pod("o-ok2", old(1)),
				pod("o-sick1", old(1), notReady, createdAt(1)), pod("o-sick2", old(1), notReady, createdAt(2)),
				pod("n0", notReady),
			}), "delete o-sick2"},
		{"oldest revision goes first",
			with(rolling(0, 2), 4, []podState{
				pod("r2-a", old(2), createdAt(1)), pod("r2-b", old(2), createdAt(2)),
				pod("r1-a", old(1), createdAt(5)), pod("r1-b", old(1), createdAt(6)),
			}), "delete r1-b,r1-a"},
		{"new pods above replicas go first",
			with(rolling(1, 1), 2, oldPods("o", 1, 2), []podState{pod("n0"), pod("n1", createdAt(1)), pod("n2", notReady)}),
			"delete n2"},
		{"finished rollout deletes the last old pod",
			with(rolling(1, 0), 3, oldPods("o", 1, 1), []podState{pod("n0"), pod("n1"), pod("n2")}), "delete o-0"},
		{"minReadySeconds: ready but not available pods hold old pods",
			with(rolling(1, 0), 2, oldPods("o", 1, 2), []podState{pod("n0", notAvailable)}), "nothing"},
		{"minReadySeconds: available pods release old pods",
			with(rolling(1, 0), 2, oldPods("o", 1, 2), []podState{pod("n0")}), "delete o-1"},
		{"terminating old pods do not count towards the surge",
			with(rolling(1, 1), 2, oldPods("o", 1, 1), []podState{pod("o-dying", old(1), terminating), pod("n0")}),
			"create 1 new"},

		// Recreate.
		{"recreate deletes every old pod", with(recreate, 3, oldPods("o", 1, 3)), "delete o-2,o-1,o-0"},
		{"recreate deletes old pods of every revision",
			with(recreate, 2, oldPods("a", 1, 1), oldPods("b", 2, 1)), "delete a-0,b-0"},
		{"recreate waits for terminating old pods",
			with(recreate, 3, []podState{pod("o-0", old(1), terminating)}), "nothing"},
		{"recreate creates new pods once old ones are gone", with(recreate, 3), "create 3 new"},
		{"recreate scales new pods", with(recreate, 1, []podState{pod("n0"), pod("n1", notReady)}), "delete n1"},

		// Paused.
		{"paused: no rollout", with(paused, 3, oldPods("o", 1, 3)), "nothing"},
		{"paused: scale up the newest revision with pods",
			with(paused, 5, oldPods("a", 1, 1), oldPods("b", 3, 2)), "create 2 old3"},
		{"paused: scale up new pods when there are some",
			with(paused, 3, oldPods("a", 1, 1), []podState{pod("n0")}), "create 1 new"},
		{"paused: scale down in deletion order across revisions",
			with(paused, 2, oldPods("a", 1, 2), []podState{pod("n0", notReady)}), "delete n0"},
		{"paused without pods creates none", with(paused, 3), "nothing"},

		// Rollback: the target revision's hash is the new hash again.
		{"rollback rolls the old template forward",
			with(rolling(1, 1), 2, oldPods("r2", 2, 2), []podState{pod("r1", func(p *podState) { p.hash = "new" }, notReady)}),
			"delete r2-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(computePlan(tc.in)); got != tc.want {
				t.Errorf("plan = %s, want %s", got, tc.want)
			}
		})
	}
}

func intstr(s string) *api.IntOrString {
	v := api.ParseIntOrString(s)
	return &v
}

func TestResolveBounds(t *testing.T) {
	cases := []struct {
		name                  string
		replicas              int32
		strategy              string
		surge, unavail        string
		wantSurge, wantUnavai int32
	}{
		{"numbers", 4, "", "1", "1", 1, 1},
		{"defaults 25% of 4", 4, "", "25%", "25%", 1, 1},
		{"25% of 10: surge rounds up, unavailable down", 10, "", "25%", "25%", 3, 2},
		{"10% of 4: surge 1, unavailable 0", 4, "", "10%", "10%", 1, 0},
		{"both round to 0: unavailable becomes 1", 4, "", "0%", "10%", 0, 1},
		{"unavailable capped at replicas", 2, "", "0", "5", 0, 2},
		{"no replicas: no unavailability", 0, "", "1", "1", 1, 0},
		{"100% surge", 3, "", "100%", "0", 3, 0},
		{"recreate has no bounds", 3, api.RecreateDeploymentStrategyType, "", "", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &api.Deployment{Spec: api.DeploymentSpec{Replicas: &tc.replicas}}
			if tc.strategy != "" {
				d.Spec.Strategy.Type = tc.strategy
			} else {
				d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr(tc.surge), MaxUnavailable: intstr(tc.unavail)}}
			}
			b, err := resolveBounds(d)
			if err != nil {
				t.Fatal(err)
			}
			if b.surge != tc.wantSurge || b.unavailable != tc.wantUnavai {
				t.Errorf("bounds = surge %d unavailable %d, want %d %d", b.surge, b.unavailable, tc.wantSurge, tc.wantUnavai)
			}
		})
	}
	d := &api.Deployment{Spec: api.DeploymentSpec{Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr("lots")}}}}
	if _, err := resolveBounds(d); err == nil {
		t.Error("a non-percent string resolved")
	}
}

// TestRolloutSimulation runs whole rollouts through computePlan against a
// simulated cluster for many bounds: each round applies the plan
// (deletions take effect at once, created pods start not ready), then the
// "node" makes the pods created in earlier rounds ready. At every step
// the total never exceeds replicas+maxSurge and available pods never drop
// below replicas-maxUnavailable; the rollout must finish.
func TestRolloutSimulation(t *testing.T) {
	surges := []string{"0", "1", "2", "25%", "100%"}
	unavails := []string{"0", "1", "25%", "50%", "100%"}
	for replicas := int32(0); replicas <= 9; replicas++ {
		for _, s := range surges {
			for _, u := range unavails {
				if s == "0" && u == "0" {
					continue // rejected by validation
				}
				name := fmt.Sprintf("r%d-surge%s-unavail%s", replicas, s, u)
				t.Run(name, func(t *testing.T) {
					d := &api.Deployment{Spec: api.DeploymentSpec{Replicas: &replicas, Strategy: api.DeploymentStrategy{
						Type:          api.RollingUpdateDeploymentStrategyType,
						RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr(s), MaxUnavailable: intstr(u)}}}}
					b, err := resolveBounds(d)
					if err != nil {
						t.Fatal(err)
					}
					simulateRollout(t, replicas, b)
				})
			}
		}
	}
}

func simulateRollout(t *testing.T, replicas int32, b bounds) {
	t.Helper()
	pods := oldPods("o", 1, int(replicas))
	seq := 0
	check := func(step string) {
		total, avail := 0, 0
		for _, p := range pods {
			total++
			if p.available {
				avail++
			}
		}
		if total > int(replicas+b.surge) {
			t.Fatalf("%s: %d pods > replicas %d + surge %d", step, total, replicas, b.surge)
		}
		if avail < int(replicas-b.unavailable) {
			t.Fatalf("%s: %d available < replicas %d - unavailable %d", step, avail, replicas, b.unavailable)
		}
	}
	check("start")
	for round := 0; round < 200; round++ {
		p := computePlan(planInput{replicas: replicas, bounds: b, newHash: "new", pods: slices.Clone(pods)})
		if p.create != nil {
			for range p.create.count {
				seq++
				pods = append(pods, pod(fmt.Sprintf("n%d", seq), notReady, createdAt(seq)))
			}
		}
		pods = slices.DeleteFunc(pods, func(x podState) bool { return slices.Contains(p.delete, x.name) })
		check(fmt.Sprintf("round %d after %s", round, describe(p)))
		// The node readies every pod that was there before this round.
		if p.empty() {
			progressed := false
			for i := range pods {
				if !pods[i].available {
					pods[i].ready, pods[i].available, pods[i].readySince = true, true, t0.Add(time.Duration(round)*time.Second)
					progressed = true
				}
			}
			if !progressed {
				for _, x := range pods {
					if x.hash != "new" {
						t.Fatalf("round %d: stuck with old pod %s", round, x.name)
					}
				}
				if len(pods) != int(replicas) {
					t.Fatalf("finished with %d pods, want %d", len(pods), replicas)
				}
				return
			}
			check(fmt.Sprintf("round %d after readiness", round))
		}
	}
	t.Fatal("rollout did not finish in 200 rounds")
}

// BenchmarkComputePlan plans one round of a 5,000-pod rolling update
// half-way through (2,500 old pods, 2,500 new, some not ready).
func BenchmarkComputePlan(b *testing.B) {
	const n = 5000
	pods := oldPods("o", 1, n/2)
	for i := range n / 2 {
		p := pod(fmt.Sprintf("n%d", i), createdAt(i))
		if i%10 == 0 {
			notReady(&p)
		}
		pods = append(pods, p)
	}
	in := planInput{replicas: n, bounds: bounds{surge: n / 4, unavailable: n / 4}, newHash: "new"}
	b.ReportAllocs()
	for b.Loop() {
		in.pods = slices.Clone(pods)
		computePlan(in)
	}
}
