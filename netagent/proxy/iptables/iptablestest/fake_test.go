package iptablestest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
)

func restore(f *Fake, in string) error {
	_, err := f.Run(context.Background(), []byte(in), "iptables-nft-restore", "-w", "--noflush")
	return err
}

func TestFakeRejectsBadInput(t *testing.T) {
	base := "*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-B\n-A PREROUTING -j KUBE-A\nCOMMIT\n"
	tests := []struct {
		name, in, errHas string
	}{
		{"jump to a missing chain", "*nat\n-A KUBE-A -j KUBE-NOPE\nCOMMIT\n", "does not exist"},
		{"jump before the chain is declared", "*nat\n-A KUBE-A -j KUBE-C\n:KUBE-C - [0:0]\nCOMMIT\n", "does not exist"},
		{"rule in an undeclared chain", "*nat\n-A KUBE-C -j RETURN\nCOMMIT\n", "chain KUBE-C does not exist"},
		{"delete a referenced chain", "*nat\n:KUBE-B - [0:0]\n-X KUBE-B\nCOMMIT\n", "still referenced"},
		{"delete a non-empty chain", "*nat\n-X KUBE-A\nCOMMIT\n", "not empty"},
		{"delete a built-in chain", "*nat\n-X PREROUTING\nCOMMIT\n", "built-in"},
		{"delete a missing chain", "*nat\n-X KUBE-Z\nCOMMIT\n", "does not exist"},
		{"-D of a rule that is not there", "*nat\n-D KUBE-A -j RETURN\nCOMMIT\n", "no rule"},
		{"unknown option", "*nat\n-A KUBE-A --frobnicate 1 -j RETURN\nCOMMIT\n", "unknown option"},
		{"unknown match", "*nat\n-A KUBE-A -m bogus -j RETURN\nCOMMIT\n", "unknown match"},
		{"unknown target option", "*nat\n-A KUBE-A -j MARK --and-mark 1\nCOMMIT\n", "no option"},
		{"--dport without -p", "*nat\n-A KUBE-A -m tcp --dport 80 -j RETURN\nCOMMIT\n", "needs -p tcp"},
		{"DNAT in filter", "*filter\n:X - [0:0]\n-A X -p tcp -j DNAT --to-destination 10.0.0.1:80\nCOMMIT\n", "only valid in the nat table"},
		{"REJECT in nat", "*nat\n-A KUBE-A -j REJECT\nCOMMIT\n", "only valid in the filter table"},
		{"bad probability", "*nat\n-A KUBE-A -m statistic --mode random --probability 1.5 -j RETURN\nCOMMIT\n", "probability"},
		{"loop", "*nat\n-A KUBE-B -j KUBE-A\nCOMMIT\n", "loop"},
		{"no COMMIT", "*nat\n:KUBE-C - [0:0]\n", "no COMMIT"},
		{"rule outside a table", "-A KUBE-A -j RETURN\n", "outside a table"},
		{"chain name too long", "*nat\n:KUBE-SVC-0123456789ABCDEFGHIJ - [0:0]\nCOMMIT\n", "longer than 28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(iptables.ModeNFT)
			if err := restore(f, base); err != nil {
				t.Fatal(err)
			}
			before := f.Save("")
			err := restore(f, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.errHas)
			}
			if after := f.Save(""); after != before {
				t.Errorf("a failed block changed the tables:\n%s", after)
			}
		})
	}
}

func TestFakeRestoreSemantics(t *testing.T) {
	f := New(iptables.ModeNFT)
	in := "*nat\n:KUBE-A - [0:0]\n-A KUBE-A -m comment --comment \"a b\" -m tcp -p tcp -d 10.0.0.1 --dport 80 -j RETURN\n-A KUBE-A -j RETURN\nCOMMIT\n"
	if err := restore(f, in); err != nil {
		t.Fatal(err)
	}
	// Normalised as iptables-save prints it.
	want := `-A KUBE-A -d 10.0.0.1/32 -p tcp -m comment --comment "a b" -m tcp --dport 80 -j RETURN`
	if got := f.Table("nat").Chains["KUBE-A"].Rules[0].String(); got != want {
		t.Errorf("rule = %s\nwant   %s", got, want)
	}
	// Declaring a chain flushes it; -I without a number inserts first;
	// -D by spec removes the matching rule.
	if err := restore(f, "*nat\n:KUBE-A - [0:0]\n-A KUBE-A -j RETURN\n-I KUBE-A -s 10.1.0.0/16 -j RETURN\n-D KUBE-A -j RETURN\nCOMMIT\n"); err != nil {
		t.Fatal(err)
	}
	rules := f.Table("nat").Chains["KUBE-A"].Rules
	if len(rules) != 1 || rules[0].Spec() != "-s 10.1.0.0/16 -j RETURN" {
		t.Errorf("rules = %v", rules)
	}
	// A failing second block leaves the first committed.
	err := restore(f, "*filter\n:KUBE-F - [0:0]\nCOMMIT\n*nat\n-A KUBE-NOPE -j RETURN\nCOMMIT\n")
	if err == nil {
		t.Fatal("bad second block accepted")
	}
	if f.Table("filter").Chains["KUBE-F"] == nil {
		t.Error("the committed first block was rolled back")
	}
	// Without --noflush the table is replaced.
	if _, err := f.Run(context.Background(), []byte("*nat\n:KUBE-B - [0:0]\nCOMMIT\n"), "iptables-nft-restore"); err != nil {
		t.Fatal(err)
	}
	if f.Table("nat").Chains["KUBE-A"] != nil {
		t.Error("a restore without --noflush kept KUBE-A")
	}
	// The other mode's tools are not there.
	if _, err := f.Run(context.Background(), nil, "iptables-legacy-save"); err == nil {
		t.Error("iptables-legacy-save answered on an nft fake")
	}
}

func TestFakeListAndDelete(t *testing.T) {
	f := New(iptables.ModeLegacy)
	if err := func() error {
		_, err := f.Run(context.Background(), []byte("*nat\n:KUBE-SERVICES - [0:0]\n-I PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\nCOMMIT\n"),
			"iptables-legacy-restore", "--noflush")
		return err
	}(); err != nil {
		t.Fatal(err)
	}
	out, err := f.Run(context.Background(), nil, "iptables-legacy", "-w", "-t", "nat", "-S", "PREROUTING")
	if err != nil {
		t.Fatal(err)
	}
	want := "-P PREROUTING ACCEPT\n-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
	if string(out) != want {
		t.Errorf("-S = %q, want %q", out, want)
	}
	if _, err := f.Run(context.Background(), nil, "iptables-legacy", "-t", "nat", "-D", "PREROUTING", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Table("nat").Chains["PREROUTING"].Rules); n != 0 {
		t.Errorf("%d rules left after -D", n)
	}
	_, err = f.Run(context.Background(), nil, "iptables-legacy", "-t", "nat", "-D", "PREROUTING", "-j", "KUBE-SERVICES")
	if code := exitCode(err); code != 1 {
		t.Errorf("-D of a missing rule: exit %d (%v), want 1", code, err)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*iptables.ExitError); ok {
		return ee.Code
	}
	return -1
}

// TestFakeCommandExitCodes: as the real tools (iptables v1.8.9), a -C of
// a rule that is not there exits 1, of a jump to a missing chain 2.
func TestFakeCommandExitCodes(t *testing.T) {
	ctx := context.Background()
	f := New(iptables.ModeNFT)
	if err := restore(f, "*nat\n:KUBE-A - [0:0]\nCOMMIT\n"); err != nil {
		t.Fatal(err)
	}
	code := func(args ...string) int {
		_, err := f.Run(ctx, nil, "iptables-nft", append([]string{"-w", "-t", "nat"}, args...)...)
		if err == nil {
			return 0
		}
		var ee *iptables.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: %v is not an *ExitError", args, err)
		}
		return ee.Code
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-C", "POSTROUTING", "-j", "KUBE-A"}, 1},
		{[]string{"-C", "POSTROUTING", "-j", "KUBE-NOPE"}, 2},
		{[]string{"-D", "POSTROUTING", "-j", "KUBE-NOPE"}, 2},
		{[]string{"-S", "KUBE-NOPE"}, 1},
		{[]string{"-A", "POSTROUTING", "-j", "KUBE-A"}, 0},
		{[]string{"-C", "POSTROUTING", "-j", "KUBE-A"}, 0},
	} {
		if got := code(tc.args...); got != tc.want {
			t.Errorf("iptables %v: exit %d, want %d", tc.args, got, tc.want)
		}
	}
}
