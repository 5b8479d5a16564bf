package iptables_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func lastRestore(f *iptablestest.Fake) string {
	r := f.Restores()
	return string(r[len(r)-1])
}

func toWeb(vip string) iptablestest.Packet {
	return iptablestest.Packet{Src: addr("10.244.0.9"), Dst: addr(vip), DPort: 80, Proto: "tcp", SPort: 40000}
}

func TestPartialSync(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	web := svcPort("ns", "web", "10.96.0.10", nil)
	api := svcPort("ns", "api", "10.96.0.11", nil)
	st := newState(svcWithEps{web, eps("10.244.0.2", "10.244.0.3", "10.244.0.4")}, svcWithEps{api, eps("10.244.0.5")})
	doSync(t, b, st, nil)
	webChains := iptables.ChainsOf(web.Name)

	t.Run("endpoint change rewrites only that Service's chains", func(t *testing.T) {
		st.Endpoints[web.Name] = eps("10.244.0.2", "10.244.0.3")
		doSync(t, b, st, []proxy.ServicePortName{web.Name})
		in := lastRestore(fake)
		gone := iptables.EndpointChain(web.Name, "10.244.0.4:8080")
		for _, want := range []string{":" + webChains.SVC + " - [0:0]", "-X " + gone} {
			if !strings.Contains(in, want) {
				t.Errorf("restore input lacks %q:\n%s", want, in)
			}
		}
		for _, not := range []string{":KUBE-SERVICES", "*filter", iptables.ChainsOf(api.Name).SVC, "*mangle"} {
			if strings.Contains(in, not) {
				t.Errorf("partial restore input mentions %q:\n%s", not, in)
			}
		}
		if got := trace(t, fake, env, toWeb("10.96.0.10")); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.2:8080": 0.5, "ACCEPT 10.244.0.3:8080": 0.5}) {
			t.Errorf("after scaling down:\n%s", formatSpread(got))
		}
	})

	t.Run("losing every endpoint: REJECT, the dispatch rule left pointing to an empty chain", func(t *testing.T) {
		st.Endpoints[web.Name] = nil
		doSync(t, b, st, []proxy.ServicePortName{web.Name})
		in := lastRestore(fake)
		if !strings.Contains(in, "*filter") || !strings.Contains(in, "has no endpoints") {
			t.Errorf("the filter table was not rewritten with a REJECT:\n%s", in)
		}
		if got := trace(t, fake, env, toWeb("10.96.0.10")); !sameSpread(got, map[string]float64{"REJECT": 1}) {
			t.Errorf("no endpoints:\n%s", formatSpread(got))
		}
		if n := len(fake.Table("nat").Chains[webChains.SVC].Rules); n != 0 {
			t.Errorf("%s still has %d rules", webChains.SVC, n)
		}
	})

	t.Run("endpoints back: the existing dispatch rule is reused, not duplicated", func(t *testing.T) {
		st.Endpoints[web.Name] = eps("10.244.0.7")
		doSync(t, b, st, []proxy.ServicePortName{web.Name})
		if n := strings.Count(fake.Save("nat"), "-A KUBE-SERVICES -d 10.96.0.10/32"); n != 1 {
			t.Errorf("%d dispatch rules for 10.96.0.10, want 1", n)
		}
		if got := trace(t, fake, env, toWeb("10.96.0.10")); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.7:8080": 1}) {
			t.Errorf("endpoints back:\n%s", formatSpread(got))
		}
	})

	t.Run("port change deletes the old dispatch rule", func(t *testing.T) {
		web2 := *web
		web2.Port = 81
		st.Services[web.Name] = &web2
		doSync(t, b, st, []proxy.ServicePortName{web.Name})
		if !strings.Contains(lastRestore(fake), "-D KUBE-SERVICES") {
			t.Errorf("no -D:\n%s", lastRestore(fake))
		}
		old := toWeb("10.96.0.10")
		if got := trace(t, fake, env, old); !sameSpread(got, map[string]float64{"REJECT": 1}) {
			t.Errorf("old port:\n%s", formatSpread(got))
		}
		p := old
		p.DPort = 81
		if got := trace(t, fake, env, p); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.7:8080": 1}) {
			t.Errorf("new port:\n%s", formatSpread(got))
		}
	})

	t.Run("removed Service: rejected, and its rules and chains gone at once", func(t *testing.T) {
		delete(st.Services, api.Name)
		delete(st.Endpoints, api.Name)
		doSync(t, b, st, []proxy.ServicePortName{api.Name})
		if got := trace(t, fake, env, toWeb("10.96.0.11")); !sameSpread(got, map[string]float64{"REJECT": 1}) {
			t.Errorf("removed service:\n%s", formatSpread(got))
		}
		check := func(when string) {
			nat := fake.Save("nat")
			for _, gone := range []string{"10.96.0.11", iptables.ChainsOf(api.Name).SVC, iptables.EndpointChain(api.Name, "10.244.0.5:8080")} {
				if strings.Contains(nat, gone) {
					t.Errorf("%s still in nat %s:\n%s", gone, when, nat)
				}
			}
		}
		check("after the partial sync")
		doSync(t, b, st, nil)
		check("after a full sync")
	})

	t.Run("NodePort removed and added back on another port", func(t *testing.T) {
		np := svcPort("ns", "np", "10.96.0.12", func(sp *proxy.ServicePort) { sp.NodePort = 30001 })
		st.Services[np.Name], st.Endpoints[np.Name] = np, eps("10.244.0.8")
		doSync(t, b, st, []proxy.ServicePortName{np.Name})
		np2 := *np
		np2.NodePort = 0
		st.Services[np.Name] = &np2
		doSync(t, b, st, []proxy.ServicePortName{np.Name})
		np3 := *np
		np3.NodePort = 30002
		st.Services[np.Name] = &np3
		doSync(t, b, st, []proxy.ServicePortName{np.Name})
		old := iptablestest.Packet{Src: addr("192.168.77.2"), Dst: nodeIP, DPort: 30001, Proto: "tcp"}
		if got := trace(t, fake, env, old); !sameSpread(got, map[string]float64{"ACCEPT 192.168.77.1:30001": 1}) {
			t.Errorf("old NodePort still leads to the Service:\n%s", formatSpread(got))
		}
		cur := old
		cur.DPort = 30002
		if got := trace(t, fake, env, cur); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.8:8080 masq": 1}) {
			t.Errorf("new NodePort:\n%s", formatSpread(got))
		}
	})

	t.Run("a full sync gives the same rules as the partial syncs did", func(t *testing.T) {
		before := fake.Save("")
		fresh := iptablestest.New(iptables.ModeNFT)
		doSync(t, newBackend(t, fresh, iptables.Config{}), st, nil)
		doSync(t, b, st, nil)
		if got, want := fake.Save(""), fresh.Save(""); got != want {
			t.Errorf("after a full sync over partial ones:\n%s\nfrom scratch:\n%s\n(before: %d bytes)", got, want, len(before))
		}
	})
}

func TestFailedSyncForcesFull(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	web := svcPort("ns", "web", "10.96.0.10", nil)
	st := newState(svcWithEps{web, eps("10.244.0.2")})
	doSync(t, b, st, nil)
	fake.FailNextRestore(errors.New("resource busy"))
	st.Endpoints[web.Name] = eps("10.244.0.3")
	if err := b.Sync(context.Background(), st, []proxy.ServicePortName{web.Name}); err == nil {
		t.Fatal("a failed restore did not fail the sync")
	}
	doSync(t, b, st, []proxy.ServicePortName{web.Name})
	if in := lastRestore(fake); !strings.Contains(in, "*mangle") || !strings.Contains(in, ":KUBE-SERVICES") {
		t.Errorf("the sync after a failure was not full:\n%s", in)
	}
	if got := trace(t, fake, env, toWeb("10.96.0.10")); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.3:8080": 1}) {
		t.Errorf("after recovery:\n%s", formatSpread(got))
	}
}

func TestRestartDeletesLeftoversAndKeepsJumpsUnique(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	web := svcPort("ns", "web", "10.96.0.10", nil)
	api := svcPort("ns", "api", "10.96.0.11", nil)
	doSync(t, newBackend(t, fake, iptables.Config{}), newState(svcWithEps{web, eps("10.244.0.2")}, svcWithEps{api, eps("10.244.0.5")}), nil)

	// A new agent process, with api deleted meanwhile.
	b := newBackend(t, fake, iptables.Config{})
	doSync(t, b, newState(svcWithEps{web, eps("10.244.0.2")}), nil)
	doSync(t, b, newState(svcWithEps{web, eps("10.244.0.2")}), nil)
	nat := fake.Save("nat")
	if strings.Contains(nat, iptables.ChainsOf(api.Name).SVC) || strings.Contains(nat, "10.244.0.5") {
		t.Errorf("the restarted backend kept the deleted Service's chains:\n%s", nat)
	}
	for _, tc := range []struct{ table, chain string }{{"nat", "PREROUTING"}, {"nat", "OUTPUT"}, {"nat", "POSTROUTING"}, {"filter", "INPUT"}, {"filter", "FORWARD"}, {"filter", "OUTPUT"}} {
		rules := fake.Table(tc.table).Chains[tc.chain].Rules
		seen := map[string]bool{}
		for _, r := range rules {
			if seen[r.Spec()] {
				t.Errorf("%s %s has a duplicate jump: %s", tc.table, tc.chain, r.Spec())
			}
			seen[r.Spec()] = true
		}
		if len(rules) == 0 {
			t.Errorf("%s %s has no jump", tc.table, tc.chain)
		}
	}
}

func TestCleanup(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	// A rule of someone else's, which must survive.
	if _, err := fake.Run(context.Background(), []byte("*nat\n:DOCKER - [0:0]\n-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER\nCOMMIT\n"),
		"iptables-nft-restore", "--noflush"); err != nil {
		t.Fatal(err)
	}
	web := svcPort("ns", "web", "10.96.0.10", func(sp *proxy.ServicePort) { sp.NodePort = 30080 })
	doSync(t, b, newState(svcWithEps{web, eps("10.244.0.2")}), nil)
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	all := fake.Save("")
	if strings.Contains(all, "KUBE-") {
		t.Errorf("KUBE- rules left after Cleanup:\n%s", all)
	}
	if !strings.Contains(all, "-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER") {
		t.Errorf("Cleanup removed someone else's rule:\n%s", all)
	}
}

// TestSplitTransactions: nft mode commits a full sync's nat table in
// several transactions; the result is the same as one transaction, and
// legacy mode never splits.
func TestSplitTransactions(t *testing.T) {
	var svcs []svcWithEps
	for i := range 30 {
		svcs = append(svcs, svcWithEps{svcPort("ns", fmt.Sprintf("s%02d", i), fmt.Sprintf("10.96.1.%d", i+1), nil),
			eps(fmt.Sprintf("10.244.1.%d", i+1), fmt.Sprintf("10.244.2.%d", i+1))})
	}
	st := newState(svcs...)
	results := map[string]string{}
	for _, tc := range []struct {
		name      string
		mode      iptables.Mode
		split     int
		natBlocks int
	}{
		{"nft split by 10 chains", iptables.ModeNFT, 10, 5},
		{"nft unsplit", iptables.ModeNFT, -1, 1},
		{"legacy", iptables.ModeLegacy, 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := iptablestest.New(tc.mode)
			b := newBackend(t, fake, iptables.Config{Mode: tc.mode, MaxChainsPerTransaction: tc.split})
			doSync(t, b, st, nil)
			if n := strings.Count(lastRestore(fake), "*nat\n"); n != tc.natBlocks {
				t.Errorf("%d nat transactions, want %d", n, tc.natBlocks)
			}
			results[tc.name] = fake.Save("")
		})
	}
	if results["nft split by 10 chains"] != results["nft unsplit"] || results["legacy"] != results["nft unsplit"] {
		t.Error("split and unsplit syncs give different rules")
	}
}

// TestSaveReadsLikeTheSeeds: `iptables-save | grep <service>` for a
// 3-endpoint Service, as docs/architecture.md shows it: probabilities 1/3, 1/2, then
// an unconditional jump, and one DNAT per endpoint.
func TestSaveReadsLikeTheSeeds(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	sp := svcPort("default", "data-channel", "10.96.88.42", func(sp *proxy.ServicePort) {
		sp.Port, sp.Name.Port = 9090, ""
	})
	e := eps("10.244.1.8", "10.244.2.15", "10.244.3.7")
	for i := range e {
		e[i].Port = 9090
	}
	doSync(t, b, newState(svcWithEps{sp, e}), nil)
	var lines []string
	for _, l := range strings.Split(fake.Save(""), "\n") {
		if strings.Contains(l, "data-channel") {
			lines = append(lines, l)
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	t.Logf("iptables-save | grep data-channel\n%s", got)

	svc := iptables.ChainsOf(sp.Name).SVC
	sep := func(ep string) string { return iptables.EndpointChain(sp.Name, ep) }
	wantRE := []string{
		`^-A KUBE-SERVICES -d 10\.96\.88\.42/32 -p tcp -m comment --comment "default/data-channel cluster IP" -m tcp --dport 9090 -j ` + svc + `$`,
		`^-A ` + svc + ` -m comment --comment "default/data-channel -> 10\.244\.1\.8:9090" -m statistic --mode random --probability 0\.3333333333 -j ` + sep("10.244.1.8:9090") + `$`,
		`^-A ` + svc + ` -m comment --comment "default/data-channel -> 10\.244\.2\.15:9090" -m statistic --mode random --probability 0\.5000000000 -j ` + sep("10.244.2.15:9090") + `$`,
		`^-A ` + svc + ` -m comment --comment "default/data-channel -> 10\.244\.3\.7:9090" -j ` + sep("10.244.3.7:9090") + `$`,
		`^-A ` + sep("10.244.1.8:9090") + ` -p tcp -m comment --comment "default/data-channel" -m tcp -j DNAT --to-destination 10\.244\.1\.8:9090$`,
		`^-A ` + sep("10.244.2.15:9090") + ` -p tcp -m comment --comment "default/data-channel" -m tcp -j DNAT --to-destination 10\.244\.2\.15:9090$`,
		`^-A ` + sep("10.244.3.7:9090") + ` -p tcp -m comment --comment "default/data-channel" -m tcp -j DNAT --to-destination 10\.244\.3\.7:9090$`,
	}
	for _, re := range wantRE {
		found := false
		for _, l := range lines {
			if regexp.MustCompile(re).MatchString(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("no line matches %s", re)
		}
	}
	golden := filepath.Join("testdata", "data-channel.iptables-save.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s:\n got\n%s\nwant\n%s", golden, got, want)
	}
}

// TestLegacyJumpRepair: in legacy mode the nat jumps are not listed on
// every full sync, but they come back once someone deleted Skiff's chains
// (the mangle hint goes with them).
func TestLegacyJumpRepair(t *testing.T) {
	fake := iptablestest.New(iptables.ModeLegacy)
	b := newBackend(t, fake, iptables.Config{Mode: iptables.ModeLegacy})
	st := newState(svcWithEps{svcPort("ns", "web", "10.96.0.10", nil), eps("10.244.0.2")})
	doSync(t, b, st, nil)
	natLists := func() int {
		n := 0
		for _, c := range fake.Commands() {
			if strings.Contains(c, "-t nat -S") {
				n++
			}
		}
		return n
	}
	before := natLists()
	doSync(t, b, st, nil)
	if natLists() != before {
		t.Errorf("the nat chains were listed again on a routine full sync")
	}
	// Someone wipes everything: rules and chains, mangle included.
	for _, table := range []string{"nat", "mangle"} {
		in := "*" + table + "\nCOMMIT\n"
		if _, err := fake.Run(context.Background(), []byte(in), "iptables-legacy-restore"); err != nil {
			t.Fatal(err)
		}
	}
	doSync(t, b, st, nil)
	if got := trace(t, fake, env, toWeb("10.96.0.10")); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.2:8080": 1}) {
		t.Errorf("after the wipe:\n%s", formatSpread(got))
	}
}
