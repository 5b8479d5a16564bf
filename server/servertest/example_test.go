package servertest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// A server outside any test (a TestMain's): New starts it, Close stops it,
// checks it stopped and removes its data dir. In a test, Start(t, opts)
// does both, the second at cleanup.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts, err := servertest.New(ctx, servertest.Options{ServiceCIDR: "10.100.0.0/24"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var svc api.Service
	err = ts.Client().Get(ctx, api.Lookup(api.Resources(), "v1", "services"), "default", "kubernetes", &svc)
	fmt.Println(svc.Spec.ClusterIP, err)
	fmt.Println(ts.Close())
	// Output:
	// 10.100.0.1 <nil>
	// <nil>
}
