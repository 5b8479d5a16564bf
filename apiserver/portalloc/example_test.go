package portalloc_test

import (
	"fmt"

	"github.com/skiff-dev/skiff/apiserver/portalloc"
)

func Example() {
	a, err := portalloc.Parse("30000-32767")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Allocate(30080), a.Allocate(30080))
	fmt.Println(a.Allocate(8080))
	port, _ := a.AllocateNext() // random, above the 86-port static band
	fmt.Println(port >= 30086, a.Used())
	// Output:
	// <nil> provided port is already allocated
	// provided port is not in the valid range. The range of valid ports is 30000-32767
	// true 2
}
