package labels_test

import (
	"fmt"

	"github.com/skiff-dev/skiff/api/labels"
)

func ExampleParse() {
	sel, err := labels.Parse("tier in (web, db), !canary, app = shop")
	if err != nil {
		panic(err)
	}
	fmt.Println(sel.String())
	fmt.Println(sel.Matches(map[string]string{"app": "shop", "tier": "web"}))
	fmt.Println(sel.Matches(map[string]string{"app": "shop", "tier": "web", "canary": "true"}))

	_, err = labels.Parse("app=shop,")
	fmt.Println(err)
	// Output:
	// app=shop,!canary,tier in (db,web)
	// true
	// false
	// found '', expected: identifier after ','
}

func ExampleFromLabelSelector() {
	// A Deployment's spec.selector, converted by package api.
	sel, err := labels.FromLabelSelector(
		map[string]string{"app": "shop"},
		[]labels.Requirement{{Key: "track", Operator: labels.OpNotIn, Values: []string{"canary"}}},
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(map[string]string{"app": "shop"}))
	// Output:
	// app=shop,track notin (canary)
	// true
}
