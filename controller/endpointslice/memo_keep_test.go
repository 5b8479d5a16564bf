package endpointslice

import "testing"

// TestMemoKeptForLargeServicesOnly: a Service's Memo is kept between
// syncs only while it selects memoMinPods pods or more; a smaller Service
// gets none (Reconcile derives its pods afresh) and its old Memo is
// forgotten.
func TestMemoKeptForLargeServicesOnly(t *testing.T) {
	cases := []struct {
		name     string
		pods     []int // pod counts of successive syncs
		wantKept []bool
	}{
		{name: "small", pods: []int{0, 5, memoMinPods - 1}, wantKept: []bool{false, false, false}},
		{name: "large", pods: []int{memoMinPods, 5000, 5000}, wantKept: []bool{true, true, true}},
		{name: "shrinks", pods: []int{200, 10, 200}, wantKept: []bool{true, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{memos: map[string]*Memo{}}
			var last *Memo
			for i, n := range tc.pods {
				m := c.memo("ns/svc", n)
				if kept := m != nil; kept != tc.wantKept[i] {
					t.Fatalf("sync %d with %d pods: Memo %v, want kept=%v", i, n, m, tc.wantKept[i])
				}
				if _, held := c.memos["ns/svc"]; held != tc.wantKept[i] {
					t.Fatalf("sync %d with %d pods: controller holds a Memo: %v, want %v", i, n, held, tc.wantKept[i])
				}
				if m != nil && last != nil && m != last {
					t.Fatalf("sync %d: a new Memo replaced the kept one", i)
				}
				last = m
			}
		})
	}
}
