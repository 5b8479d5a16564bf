package ipalloc_test

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/skiff-dev/skiff/apiserver/ipalloc"
)

func Example() {
	a, err := ipalloc.New(netip.MustParsePrefix("10.96.0.0/16"))
	if err != nil {
		panic(err)
	}
	// The "kubernetes" Service takes the first address.
	fmt.Println(a.Allocate(a.FirstIP()), a.FirstIP())

	err = a.Allocate(a.FirstIP())
	fmt.Println(errors.Is(err, ipalloc.ErrAllocated), err)

	err = a.Allocate(netip.MustParseAddr("10.97.0.1"))
	fmt.Println(err)

	ip, _ := a.AllocateNext() // random, from the upper band
	fmt.Println(a.Has(ip), a.Used())
	// Output:
	// <nil> 10.96.0.1
	// true provided IP is already allocated
	// provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16
	// true 2
}
