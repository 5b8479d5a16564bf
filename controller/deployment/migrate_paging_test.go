package deployment_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/deployment"
)

// pagingPods is a MigrationClient over no Deployments and n pods that
// serves pod lists in the pages a request's Limit asks for, with its own
// continue tokens, and refuses a list that is not paged or a token it
// did not give. Every other call is an error: nothing is to migrate.
type pagingPods struct {
	n, served, lists int
}

func (f *pagingPods) List(_ context.Context, info *api.ResourceInfo, _ string, opts client.ListOptions, into any) error {
	switch l := into.(type) {
	case *api.DeploymentList:
		return nil
	case *api.PodList:
		f.lists++
		if opts.Limit <= 0 || opts.Limit > 1000 {
			return fmt.Errorf("pods listed with limit %d", opts.Limit)
		}
		from := 0
		if opts.Continue != "" {
			var err error
			if from, err = strconv.Atoi(opts.Continue); err != nil || from != f.served {
				return fmt.Errorf("continue %q, want %d", opts.Continue, f.served)
			}
		}
		to := min(from+int(opts.Limit), f.n)
		for i := from; i < to; i++ {
			l.Items = append(l.Items, api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "default"}})
		}
		f.served = to
		if to < f.n {
			l.Continue = strconv.Itoa(to)
		}
		return nil
	}
	return fmt.Errorf("unexpected list of %s", info.Resource)
}

func (f *pagingPods) Get(context.Context, *api.ResourceInfo, string, string, api.Object) error {
	return fmt.Errorf("unexpected get")
}

func (f *pagingPods) Create(context.Context, *api.ResourceInfo, string, api.Object) error {
	return fmt.Errorf("unexpected create")
}

func (f *pagingPods) Patch(context.Context, *api.ResourceInfo, string, string, string, []byte, api.Object, ...string) error {
	return fmt.Errorf("unexpected patch")
}

// TestMigrateReadsPodsInPages: Migrate walks every page of the pod list
// (a start over many pods holds one page at a time) and stops at the last.
func TestMigrateReadsPodsInPages(t *testing.T) {
	f := &pagingPods{n: 1234}
	if err := deployment.Migrate(t.Context(), f, nil); err != nil {
		t.Fatal(err)
	}
	if f.served != f.n || f.lists < 2 {
		t.Fatalf("read %d of %d pods in %d lists, want all in several pages", f.served, f.n, f.lists)
	}
}
