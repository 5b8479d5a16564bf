package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestServiceCIDRFull: once every address of --service-cidr is taken, a
// new Service fails with `failed to allocate IP` (docs/architecture.md's failure case),
// through the API and through `skiff apply`; deleting one frees a slot.
// No agent: allocation is the control plane's alone.
func TestServiceCIDRFull(t *testing.T) {
	s := servertest.Start(t, servertest.Options{ServiceCIDR: "10.100.0.0/29", Logger: testLog()})
	admin := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &cluster{t: t, dataDir: s.DataDir()}
	svc := func(i int) *api.Service {
		return &api.Service{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("s%d", i), Namespace: "default"},
			Spec: api.ServiceSpec{Selector: map[string]string{"app": "x"},
				Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
	}
	created := 0
	var last error
	for i := range 20 {
		if last = admin.Create(ctx, resServices, "default", svc(i)); last != nil {
			break
		}
		created++
	}
	if last == nil || !strings.Contains(last.Error(), "failed to allocate IP") {
		t.Fatalf("after %d Services in a /29: %v, want failed to allocate IP", created, last)
	}
	if created == 0 || created > 8 {
		t.Fatalf("%d Services fit in a /29 (with the kubernetes Service)", created)
	}
	out, err := c.cli("create", "service", "clusterip", "one-more", "--tcp=80:8080")
	if err == nil || !strings.Contains(err.Error(), "failed to allocate IP") {
		t.Fatalf("skiff create service on a full range: %v\n%s", err, out)
	}
	c.mustCLI("delete", "service", "s0")
	if err := admin.Create(ctx, resServices, "default", svc(100)); err != nil {
		t.Fatalf("a Service after freeing one address: %v", err)
	}
}
