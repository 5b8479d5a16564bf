package iptables_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

// hostExec is a host with both backends' tools, each its own fake, and an
// `iptables` alternative pointing at one of them.
type hostExec struct {
	nft, legacy *iptablestest.Fake
	def         iptables.Mode
}

func (h hostExec) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	switch {
	case strings.Contains(name, "-legacy"):
		return h.legacy.Run(ctx, stdin, name, args...)
	case strings.Contains(name, "-nft"):
		return h.nft.Run(ctx, stdin, name, args...)
	case h.def == iptables.ModeLegacy:
		return h.legacy.Run(ctx, stdin, name, args...)
	}
	return h.nft.Run(ctx, stdin, name, args...)
}

func TestDetect(t *testing.T) {
	rules := func(f *iptablestest.Fake, in string) {
		t.Helper()
		if _, err := f.Run(context.Background(), []byte(in), "iptables-restore", "--noflush"); err != nil {
			t.Fatal(err)
		}
	}
	hint := "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n"
	docker := "*nat\n:DOCKER - [0:0]\n-A PREROUTING -j DOCKER\n-A OUTPUT -j DOCKER\nCOMMIT\n"
	one := "*filter\n-A INPUT -j ACCEPT\nCOMMIT\n"
	tests := []struct {
		name        string
		nft, legacy string
		def         iptables.Mode
		want        iptables.Mode
	}{
		{"empty host, nft default", "", "", iptables.ModeNFT, iptables.ModeNFT},
		{"empty host, legacy default", "", "", iptables.ModeLegacy, iptables.ModeLegacy},
		{"legacy has more rules", one, docker, iptables.ModeNFT, iptables.ModeLegacy},
		{"nft has more rules", docker, one, iptables.ModeLegacy, iptables.ModeNFT},
		{"a hint beats the rule count", hint, docker, iptables.ModeLegacy, iptables.ModeNFT},
		{"a legacy hint", docker, hint, iptables.ModeNFT, iptables.ModeLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hostExec{nft: iptablestest.New(iptables.ModeNFT), legacy: iptablestest.New(iptables.ModeLegacy), def: tt.def}
			if tt.nft != "" {
				rules(h.nft, tt.nft)
			}
			if tt.legacy != "" {
				rules(h.legacy, tt.legacy)
			}
			got, err := iptables.Detect(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Detect = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNewDetectsAndWritesTheHint(t *testing.T) {
	h := hostExec{nft: iptablestest.New(iptables.ModeNFT), legacy: iptablestest.New(iptables.ModeLegacy), def: iptables.ModeLegacy}
	b, err := iptables.New(context.Background(), iptables.Config{Exec: h})
	if err != nil {
		t.Fatal(err)
	}
	if b.Mode() != iptables.ModeLegacy {
		t.Fatalf("mode = %s", b.Mode())
	}
	doSync(t, b, newState(), nil)
	if !strings.Contains(h.legacy.Save("mangle"), ":KUBE-IPTABLES-HINT") {
		t.Error("no hint chain written")
	}
	// The next start finds the hint even if the default changed.
	h.def = iptables.ModeNFT
	if got, _ := iptables.Detect(context.Background(), h); got != iptables.ModeLegacy {
		t.Errorf("after the hint: %s", got)
	}
}
