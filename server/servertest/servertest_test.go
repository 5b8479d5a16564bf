package servertest

import (
	"context"
	"net"
	"net/netip"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
)

var resServices = api.Lookup(api.Resources(), "v1", "services")

func TestConfigFor(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		check func(t *testing.T, c config.Server)
	}{{
		name: "zero value: loopback, no agent, no fsync, no DNS",
		opts: Options{DataDir: "/d"},
		check: func(t *testing.T, c config.Server) {
			if c.DataDir != "/d" || c.Listen != "127.0.0.1:0" || !c.DisableAgent || !c.NoSync || c.DNSListen != "" || c.LBCIDR != "" {
				t.Errorf("got %+v", c)
			}
			if c.ServiceCIDR != config.ServerDefaults().ServiceCIDR {
				t.Errorf("service CIDR %q, want the default", c.ServiceCIDR)
			}
		},
	}, {
		name: "fields",
		opts: Options{DataDir: "/d", Agent: true, Sync: true, DNS: true, ServiceCIDR: "10.97.0.0/16", LBCIDR: "198.51.100.0/29",
			DisabledControllers: []string{"gc"}},
		check: func(t *testing.T, c config.Server) {
			if c.DisableAgent || c.NoSync || c.DNSListen != "127.0.0.1:0" || !slices.Equal(c.DNSUpstream, []string{"127.0.0.1:1"}) ||
				c.ServiceCIDR != "10.97.0.0/16" || c.LBCIDR != "198.51.100.0/29" || !slices.Equal(c.DisabledControllers, []string{"gc"}) {
				t.Errorf("got %+v", c)
			}
		},
	}, {
		name: "Config runs last",
		opts: Options{DataDir: "/d", DNS: true, LBCIDR: "198.51.100.0/29", Config: func(c *config.Server) {
			c.DNSUpstream = []string{"127.0.0.1:5353"}
			c.LBCIDR = ""
			c.Listen = "127.0.0.1:6443"
		}},
		check: func(t *testing.T, c config.Server) {
			if !slices.Equal(c.DNSUpstream, []string{"127.0.0.1:5353"}) || c.LBCIDR != "" || c.Listen != "127.0.0.1:6443" {
				t.Errorf("got %+v", c)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := configFor(tt.opts)
			if _, err := c.Parse(); err != nil {
				t.Fatalf("invalid configuration: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestStartRestartStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts := Start(t, Options{DNS: true, ServiceCIDR: "10.97.0.0/16", DisabledControllers: []string{"nodelifecycle"}})
	url, dnsAddr := ts.URL(), ts.DNSAddr()
	if !strings.HasPrefix(url, "https://127.0.0.1:") || strings.HasSuffix(url, ":0") {
		t.Fatalf("URL %q", url)
	}
	if ap, err := netip.ParseAddrPort(dnsAddr); err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
		t.Fatalf("DNSAddr %q", dnsAddr)
	}
	kc, err := os.ReadFile(ts.Kubeconfig())
	if err != nil || !strings.Contains(string(kc), "server: "+url) {
		t.Fatalf("kubeconfig %s (%v) does not point at %s:\n%s", ts.Kubeconfig(), err, url, kc)
	}
	var k api.Service
	if err := ts.Client().Get(ctx, resServices, "default", "kubernetes", &k); err != nil {
		t.Fatal(err)
	}
	if k.Spec.ClusterIP != "10.97.0.1" {
		t.Fatalf("kubernetes Service ClusterIP %s, want 10.97.0.1 of Options.ServiceCIDR", k.Spec.ClusterIP)
	}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "keep"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80}}}}
	if err := ts.Client().Create(ctx, resServices, "default", svc); err != nil {
		t.Fatal(err)
	}

	ts.Restart()
	if ts.URL() != url || ts.DNSAddr() != dnsAddr {
		t.Fatalf("after Restart: URL %s DNS %s, want %s %s", ts.URL(), ts.DNSAddr(), url, dnsAddr)
	}
	var got api.Service
	if err := ts.Client().Get(ctx, resServices, "default", "keep", &got); err != nil || got.UID != svc.UID {
		t.Fatalf("Service after Restart: %v (UID %s, want %s)", err, got.UID, svc.UID)
	}

	ts.Stop()
	ts.Stop() // a second Stop does nothing
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "https://"), time.Second); err == nil {
		conn.Close()
		t.Fatal("the API still accepts connections after Stop")
	}
	if left := labelledGoroutines(goroutineLabel, ts.label); len(left) != 0 {
		t.Fatalf("goroutines left after Stop:\n%s", strings.Join(left, "\n"))
	}
}

func TestNewClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := ts.DataDir()
	var l api.ServiceList
	if err := ts.Client().List(ctx, resServices, "", client.ListOptions{}, &l); err != nil || len(l.Items) != 1 {
		t.Errorf("list services: %v (%d)", err, len(l.Items))
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Close left the data dir %s: %v", dir, err)
	}
	if err := ts.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestLabelledGoroutines(t *testing.T) {
	release := make(chan struct{})
	started, ended := make(chan struct{}, 2), make(chan struct{}, 2)
	block := func() { started <- struct{}{}; <-release; ended <- struct{}{} }
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, "mine"), func(context.Context) {
		go func() { go block(); block() }()
	})
	<-started
	<-started
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, "other"), func(context.Context) {
		go func() { <-release }()
	})
	go func() { <-release }()

	left := labelledGoroutines(goroutineLabel, "mine")
	if len(left) != 2 {
		t.Fatalf("%d stacks labelled mine, want 2 (one started by the other):\n%s", len(left), strings.Join(left, "\n"))
	}
	for _, st := range left {
		if !strings.Contains(st, "TestLabelledGoroutines") {
			t.Errorf("stack does not name the test's function:\n%s", st)
		}
	}
	if left := waitGoroutines(goroutineLabel, "mine", 50*time.Millisecond); len(left) != 2 {
		t.Fatalf("waitGoroutines returned %d stacks of blocked goroutines, want 2", len(left))
	}
	close(release)
	<-ended
	<-ended
	if left := waitGoroutines(goroutineLabel, "mine", 5*time.Second); len(left) != 0 {
		t.Fatalf("ended goroutines still reported:\n%s", strings.Join(left, "\n"))
	}
}

func TestStopReportsALeakedGoroutine(t *testing.T) {
	ts := Start(t, Options{})
	ts.leakWait = 200 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	// A goroutine of this start of the server that never ends.
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, ts.label), func(context.Context) {
		go func() { <-release }()
	})
	err := ts.stop()
	if err == nil || !strings.Contains(err.Error(), "TestStopReportsALeakedGoroutine") {
		t.Fatalf("stop: %v; want the leaked goroutine's stack", err)
	}
}
