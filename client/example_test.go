package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Reading the admin kubeconfig, listing pods in every namespace and
// following their changes from the list's revision, relisting on 410 Gone.
func Example() {
	cfg, err := client.FromKubeconfig("/var/lib/skiff/admin.kubeconfig")
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	pods := &api.ResourceInfo{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	ctx := context.Background()

	var list client.RawList
	if err := c.List(ctx, pods, "", client.ListOptions{LabelSelector: "app=web"}, &list); err != nil {
		log.Fatal(err)
	}
	w, err := c.Watch(ctx, pods, "", client.ListOptions{LabelSelector: "app=web", ResourceVersion: list.Metadata.ResourceVersion})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if client.IsGone(ev.Err()) {
			break // relist
		}
		var obj client.Unstructured
		if err := json.Unmarshal(ev.Object, &obj); err == nil {
			fmt.Println(ev.Type, obj.Namespace, obj.Name)
		}
	}
}
