package patch_test

import (
	"fmt"

	"github.com/skiff-dev/skiff/apiserver/patch"
)

func ExampleApply() {
	deploy := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.25"},{"name":"log","image":"busybox"}]}}}}`)
	body := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`)

	t, ok := patch.ParseContentType("application/strategic-merge-patch+json; charset=utf-8")
	if !ok {
		return
	}
	out, err := patch.Apply(t, deploy, body)
	if err != nil {
		fmt.Println(patch.StatusCode(err), err)
		return
	}
	fmt.Println(string(out))

	_, err = patch.Apply(patch.JSONPatch, deploy, []byte(`[{"op":"test","path":"/spec/replicas","value":3}]`))
	fmt.Println(patch.StatusCode(err))
	// Output:
	// {"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"web"},{"image":"busybox","name":"log"}]}}}}
	// 422
}
