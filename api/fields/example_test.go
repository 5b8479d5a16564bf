package fields_test

import (
	"fmt"

	"github.com/skiff-dev/skiff/api/fields"
)

func ExampleParse() {
	sel, err := fields.Parse("spec.nodeName=node-1,status.phase!=Succeeded")
	if err != nil {
		panic(err)
	}
	fmt.Println(sel.Fields())
	fmt.Println(sel.Matches(map[string]string{"spec.nodeName": "node-1", "status.phase": "Running"}))
	fmt.Println(fields.ExactMatch(sel, "spec.nodeName"))
	// Output:
	// [spec.nodeName status.phase]
	// true
	// node-1 true
}
