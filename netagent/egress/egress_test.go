package egress

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
	"github.com/skiff-dev/skiff/netagent/proxy/nftables"
)

var (
	pods    = netip.MustParsePrefix("10.244.3.0/24")
	cluster = netip.MustParsePrefix("10.244.0.0/16")
)

// natChain is the rules of one nat chain as iptables-save prints them.
func natChain(f *iptablestest.Fake, chain string) []string {
	var out []string
	for _, l := range strings.Split(f.Save("nat"), "\n") {
		if strings.HasPrefix(l, "-A "+chain+" ") {
			out = append(out, l)
		}
	}
	return out
}

func TestIPTablesEnsureAndRemove(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			f := iptablestest.New(mode)
			b := IPTables{Exec: f, Mode: mode}
			for range 2 { // idempotent
				if err := b.Ensure(ctx, Config{PodCIDR: pods, ClusterCIDR: cluster}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(f.Restores()); n != 1 {
				t.Errorf("%d iptables-restore runs for two Ensures of the same rules, want 1", n)
			}
			if got := natChain(f, "POSTROUTING"); len(got) != 1 || !strings.Contains(got[0], "-j "+Chain) {
				t.Fatalf("POSTROUTING = %q, want one jump to %s", got, Chain)
			}
			want := []string{
				"-A SKIFF-EGRESS ! -s 10.244.3.0/24 -j RETURN",
				`-A SKIFF-EGRESS -d 10.244.0.0/16 -m comment --comment "pod to pod keeps its source" -j RETURN`,
				"-A SKIFF-EGRESS -d 224.0.0.0/4 -j RETURN",
				`-A SKIFF-EGRESS -m comment --comment "pods leaving the cluster" -j MASQUERADE --random-fully`,
			}
			if got := natChain(f, Chain); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s =\n%s\nwant\n%s", Chain, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			// A new podCIDR replaces the rules; no cluster CIDR means the
			// pod range.
			other := netip.MustParsePrefix("10.244.9.0/24")
			if err := b.Ensure(ctx, Config{PodCIDR: other}); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(natChain(f, Chain), "\n")
			if strings.Contains(got, "10.244.3.0") || !strings.Contains(got, "! -s 10.244.9.0/24") || !strings.Contains(got, "-d 10.244.9.0/24") {
				t.Fatalf("after a podCIDR change:\n%s", got)
			}

			rs, err := b.Rules(ctx)
			if err != nil || len(rs) != 5 || !strings.Contains(rs[0], "POSTROUTING") || !strings.Contains(rs[4], "MASQUERADE") {
				t.Fatalf("Rules() = %q, %v: want the jump and the chain's four rules", rs, err)
			}
			if err := b.Remove(ctx); err != nil {
				t.Fatal(err)
			}
			if rs, err := b.Rules(ctx); err != nil || len(rs) != 0 {
				t.Fatalf("Rules() after Remove = %q, %v", rs, err)
			}
			if s := f.Save("nat"); strings.Contains(s, Chain) {
				t.Fatalf("after Remove:\n%s", s)
			}
			if err := b.Remove(ctx); err != nil { // nothing there: fine
				t.Fatal(err)
			}
		})
	}
}

func TestIPTablesKeepsOtherRules(t *testing.T) {
	ctx := context.Background()
	f := iptablestest.New(iptables.ModeNFT)
	if _, err := f.Run(ctx, []byte("*nat\n:KUBE-POSTROUTING - [0:0]\n-A POSTROUTING -j KUBE-POSTROUTING\n-A KUBE-POSTROUTING -j RETURN\nCOMMIT\n"),
		"iptables-nft-restore", "--noflush"); err != nil {
		t.Fatal(err)
	}
	b := IPTables{Exec: f, Mode: iptables.ModeNFT}
	if err := b.Ensure(ctx, Config{PodCIDR: pods, ClusterCIDR: cluster}); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if got := natChain(f, "POSTROUTING"); len(got) != 1 || got[0] != "-A POSTROUTING -j KUBE-POSTROUTING" {
		t.Fatalf("POSTROUTING = %q: another program's jump must stay", got)
	}
	if got := natChain(f, "KUBE-POSTROUTING"); len(got) != 1 {
		t.Fatalf("KUBE-POSTROUTING = %q", got)
	}
}

func TestBadConfig(t *testing.T) {
	ctx := context.Background()
	f := iptablestest.New(iptables.ModeNFT)
	ipt := IPTables{Exec: f, Mode: iptables.ModeNFT}
	nft := NFTables{Kernel: nftables.NewFake()}
	v6 := netip.MustParsePrefix("fd00:10:244::/64")
	for name, tc := range map[string]struct {
		c    Config
		want string
	}{
		"no podCIDR":     {Config{ClusterCIDR: cluster}, "no podCIDR"},
		"mixed families": {Config{PodCIDR: pods, ClusterCIDR: netip.MustParsePrefix("fd00::/48")}, "different families"},
	} {
		for _, b := range []interface {
			Ensure(context.Context, Config) error
		}{ipt, nft} {
			if err := b.Ensure(ctx, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %T: err = %v, want %q", name, b, err, tc.want)
			}
		}
	}
	if err := ipt.Ensure(ctx, Config{PodCIDR: v6}); err == nil || !strings.Contains(err.Error(), "only IPv4") {
		t.Errorf("iptables with an IPv6 pod range: err = %v", err)
	}
	if len(f.Restores()) != 0 {
		t.Errorf("bad configs reached iptables-restore: %q", f.Restores())
	}
}

func TestNFTablesEnsureAndRemove(t *testing.T) {
	ctx := context.Background()
	k := nftables.NewFake()
	b := NFTables{Kernel: k}
	for range 2 {
		if err := b.Ensure(ctx, Config{PodCIDR: pods, ClusterCIDR: cluster}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"ip saddr != 10.244.3.0/24 return",
		"ip daddr 10.244.0.0/16 return",
		"ip daddr 224.0.0.0/4 return",
		"masquerade",
	}
	got := k.Chain(nftables.IPv4, Table, "postrouting")
	if len(got) != len(want) {
		t.Fatalf("postrouting = %q, want %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("rule %d = %q, want %q", i, got[i], want[i])
		}
	}
	if d := k.Dump(nftables.IPv4, Table); !strings.Contains(d, "type nat hook postrouting priority 100") {
		t.Errorf("the chain is not a srcnat base chain:\n%s", d)
	}

	// An IPv6 pod range gets an ip6 table.
	if err := b.Ensure(ctx, Config{PodCIDR: netip.MustParsePrefix("fd00:10:244:3::/64"), ClusterCIDR: netip.MustParsePrefix("fd00:10:244::/48")}); err != nil {
		t.Fatal(err)
	}
	if got := k.Chain(nftables.IPv6, Table, "postrouting"); len(got) != 4 || !strings.Contains(got[2], "ff00::/8") {
		t.Fatalf("ip6 postrouting = %q", got)
	}

	rs, err := b.Rules(ctx)
	if err != nil || len(rs) != 8 || !strings.HasPrefix(rs[0], "ip skiff-egress postrouting: ") || !strings.Contains(rs[7], "masquerade") {
		t.Fatalf("Rules() = %q, %v: want both tables' four rules", rs, err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if rs, err := b.Rules(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("Rules() after Remove = %q, %v", rs, err)
	}
	if k.HasTable(nftables.IPv4, Table) || k.HasTable(nftables.IPv6, Table) {
		t.Fatal("a table is left after Remove")
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
}
