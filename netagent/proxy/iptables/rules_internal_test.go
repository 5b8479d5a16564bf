package iptables

import "testing"

// Chain names must be kube-proxy's: these are the well-known chains of a
// default kubeadm cluster.
func TestChainNamesMatchKubeProxy(t *testing.T) {
	tests := []struct {
		name, proto, want string
	}{
		{"default/kubernetes:https", "tcp", "KUBE-SVC-NPX46M4PTMTKRN6Y"},
		{"kube-system/kube-dns:dns", "udp", "KUBE-SVC-TCOU7JCQXEZGVUNU"},
		{"kube-system/kube-dns:dns-tcp", "tcp", "KUBE-SVC-ERIFXISQEP7F7OF4"},
		{"kube-system/kube-dns:metrics", "tcp", "KUBE-SVC-JD5MR3NA4I4DYORP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := svcChainName(tt.name, tt.proto); got != tt.want {
				t.Errorf("svcChainName = %s, want %s", got, tt.want)
			}
		})
	}
	if got := sepChainName("default/kubernetes:https", "tcp", "172.18.0.2:6443"); len(got) != 25 || got[:9] != "KUBE-SEP-" {
		t.Errorf("sepChainName = %q", got)
	}
}

func TestProbability(t *testing.T) {
	var g generator
	for n, want := range map[int]string{1: "1.0000000000", 2: "0.5000000000", 3: "0.3333333333", 7: "0.1428571429"} {
		if got := g.probability(n); got != want {
			t.Errorf("probability(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestSplitSpec(t *testing.T) {
	got := splitSpec(`-m comment --comment "kubernetes service portals" -j KUBE-SERVICES`)
	want := []string{"-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q", got)
		}
	}
}
