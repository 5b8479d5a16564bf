package netagent

import (
	"context"
	"net/netip"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestPodResolvConf(t *testing.T) {
	host := parseResolvConf([]byte("# host\nnameserver 192.0.2.53\nnameserver 192.0.2.54 ; second\nsearch corp.example lab.example\noptions edns0 ndots:2\n"))
	gw := netip.MustParseAddr("10.244.3.1")
	str := func(s string) *string { return &s }
	pod := func(policy string, hostNet bool, dc *api.PodDNSConfig) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "shop"},
			Spec: api.PodSpec{DNSPolicy: policy, HostNetwork: hostNet, DNSConfig: dc}}
	}
	cases := []struct {
		name    string
		pod     *api.Pod
		want    string
		wantErr bool
	}{
		{"default policy is ClusterFirst", pod("", false, nil),
			"nameserver 10.244.3.1\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n", false},
		{"ClusterFirst", pod(api.DNSClusterFirst, false, nil),
			"nameserver 10.244.3.1\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n", false},
		{"ClusterFirst with dnsConfig merged", pod(api.DNSClusterFirst, false, &api.PodDNSConfig{
			Nameservers: []string{"192.0.2.99"}, Searches: []string{"extra.example", "svc.cluster.local"},
			Options: []api.PodDNSConfigOption{{Name: "ndots", Value: str("2")}, {Name: "single-request"}}}),
			"nameserver 10.244.3.1\nnameserver 192.0.2.99\nsearch shop.svc.cluster.local svc.cluster.local cluster.local extra.example\noptions ndots:2 single-request\n", false},
		{"ClusterFirst on the host network is Default", pod(api.DNSClusterFirst, true, nil),
			"nameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example lab.example\noptions edns0 ndots:2\n", false},
		{"ClusterFirstWithHostNet", pod(api.DNSClusterFirstWithHostNet, true, nil),
			"nameserver 10.244.3.1\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n", false},
		{"Default", pod(api.DNSDefault, false, nil),
			"nameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example lab.example\noptions edns0 ndots:2\n", false},
		{"None", pod(api.DNSNone, false, &api.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"}}),
			"nameserver 1.1.1.1\nsearch a.example\n", false},
		{"None caps nameservers at 3", pod(api.DNSNone, false, &api.PodDNSConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}}),
			"nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n", false},
		{"None without dnsConfig", pod(api.DNSNone, false, nil), "", true},
		{"unknown policy", pod("Sometimes", false, nil), "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := podResolvConf(tc.pod, gw, "cluster.local", host)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got\n%s", rc)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rc.String(); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, err := podResolvConf(pod("", false, nil), netip.Addr{}, "cluster.local", host); err == nil {
		t.Fatal("ClusterFirst without a node DNS address: want an error")
	}
}

func TestPodHosts(t *testing.T) {
	ip := netip.MustParseAddr("10.244.3.7")
	long := "a-very-long-pod-name-that-goes-on-and-on-and-on-beyond-sixty-three-chars-x"
	cases := []struct {
		name string
		pod  api.Pod
		want string
	}{
		{"name", api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-1", Namespace: "shop"}}, "10.244.3.7\tweb-1\n"},
		{"hostname and subdomain", api.Pod{ObjectMeta: api.ObjectMeta{Name: "db-0", Namespace: "shop"},
			Spec: api.PodSpec{Hostname: "db-0", Subdomain: "db"}}, "10.244.3.7\tdb-0.db.shop.svc.cluster.local\tdb-0\n"},
		{"long name cut to 63", api.Pod{ObjectMeta: api.ObjectMeta{Name: long, Namespace: "x"}}, "10.244.3.7\t" + long[:63] + "\n"},
		{"host aliases", api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "x"},
			Spec: api.PodSpec{HostAliases: []api.HostAlias{{IP: "192.0.2.5", Hostnames: []string{"foo.local", "bar.local"}}}}},
			"10.244.3.7\tp\n\n# Entries added by HostAliases.\n192.0.2.5\tfoo.local\tbar.local\n"},
	}
	header := "# Kubernetes-managed hosts file (written by the skiff agent).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podHosts(&tc.pod, ip, "cluster.local"); got != header+tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, header+tc.want)
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	yes := true
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1",
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "blue"}},
		Spec: api.PodSpec{ServiceAccountName: "sa"}}
	ec := envContext{podIP: netip.MustParseAddr("10.244.3.7"), hostIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")}, nodeName: "n1"}
	field := func(name, path string) api.EnvVar {
		return api.EnvVar{Name: name, ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: path}}}
	}
	res := func(name, r, div string) api.EnvVar {
		s := &api.ResourceFieldSelector{Resource: r}
		if div != "" {
			q := api.Quantity(div)
			s.Divisor = &q
		}
		return api.EnvVar{Name: name, ValueFrom: &api.EnvVarSource{ResourceFieldRef: s}}
	}
	cases := []struct {
		name    string
		env     []api.EnvVar
		want    []string
		wantErr bool
	}{
		{"literals and expansion", []api.EnvVar{{Name: "A", Value: "x"}, {Name: "B", Value: "$(A)-$(MISSING)-$$(A)"}},
			[]string{"A=x", "B=x-$(MISSING)-$(A)"}, false},
		{"downward API", []api.EnvVar{field("N", "metadata.name"), field("NS", "metadata.namespace"), field("U", "metadata.uid"),
			field("IP", "status.podIP"), field("IPS", "status.podIPs"), field("H", "status.hostIP"), field("NODE", "spec.nodeName"),
			field("SA", "spec.serviceAccountName"), field("L", "metadata.labels['app']"), field("AN", "metadata.annotations['team']")},
			[]string{"N=web", "NS=shop", "U=u-1", "IP=10.244.3.7", "IPS=10.244.3.7", "H=192.0.2.10", "NODE=n1", "SA=sa", "L=web", "AN=blue"}, false},
		{"a later duplicate wins in place", []api.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "A", Value: "3"}},
			[]string{"A=3", "B=2"}, false},
		{"resources", []api.EnvVar{res("CPU", "limits.cpu", "1m"), res("MEM", "requests.memory", "1Mi"), res("NONE", "limits.memory", "")},
			[]string{"CPU=500", "MEM=64", "NONE="}, false},
		{"unsupported fieldRef", []api.EnvVar{field("X", "spec.containers")}, nil, true},
		{"required secret", []api.EnvVar{{Name: "S", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{Key: "k"}}}}, nil, true},
		{"optional configmap skipped", []api.EnvVar{{Name: "C", ValueFrom: &api.EnvVarSource{ConfigMapKeyRef: &api.ConfigMapKeySelector{Key: "k", Optional: &yes}}}, {Name: "D", Value: "d"}},
			[]string{"D=d"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &api.Container{Name: "app", Env: tc.env, Resources: api.ResourceRequirements{
				Limits: api.ResourceList{"cpu": "500m"}, Requests: api.ResourceList{"memory": "64Mi"}}}
			got, _, err := containerEnv(context.Background(), pod, c, ec, fakeObjects{})
			if tc.wantErr {
				var ce errEnvConfig
				if err == nil || !asEnvErr(err, &ce) {
					t.Fatalf("want a config error, got %v (%v)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
	if got := expandArgs([]string{"--name=$(N)", "$(X)"}, []string{"N=web"}); got[0] != "--name=web" || got[1] != "$(X)" {
		t.Fatalf("expandArgs: %q", got)
	}
}

func asEnvErr(err error, target *errEnvConfig) bool {
	e, ok := err.(errEnvConfig)
	if ok {
		*target = e
	}
	return ok
}
