package netagent_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent"
)

func TestRunProxyRefusesModes(t *testing.T) {
	cases := []struct {
		name string
		mode string
		want string
	}{
		{"unknown mode", "userspace", `--proxy-mode "userspace": want iptables, nftables or ipvs`},
		{"ipvs without IPVS", "ipvs", "--proxy-mode ipvs: this kernel has no IPVS (/proc/net/ip_vs missing)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode == "ipvs" {
				if _, err := os.Stat("/proc/net/ip_vs"); err == nil {
					t.Skip("this kernel has IPVS (/proc/net/ip_vs): the missing-IPVS error cannot happen here")
				}
			}
			// No NetNS, no informers: the mode is checked before anything
			// touches a namespace or the API.
			err := netagent.RunProxy(context.Background(), netagent.ProxyParams{Mode: tc.mode})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunProxy(%q) = %v, want an error containing %q", tc.mode, err, tc.want)
			}
		})
	}
}
