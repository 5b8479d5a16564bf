package api_test

import (
	"fmt"

	"github.com/skiff-dev/skiff/api"
)

func ExampleIntOrString_ScaledValue() {
	surge := api.FromString("25%")
	up, _ := surge.ScaledValue(10, true)
	down, _ := surge.ScaledValue(10, false)
	fmt.Println(up, down)
	// Output: 3 2
}

func ExampleResources() {
	res := api.Resources()
	svc := api.LookupName(res, "svc")
	obj := svc.New().(*api.Service)
	obj.Name, obj.Namespace = "web", "default"
	obj.Spec.Ports = []api.ServicePort{{Port: 0, TargetPort: api.FromInt32(8080)}}
	svc.Default(obj)
	fmt.Println(svc.GroupVersion(), svc.Resource, svc.Namespaced)
	fmt.Println(svc.ValidateCreate(obj))
	// Output:
	// v1 services true
	// spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive
}
