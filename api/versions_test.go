package api

import "testing"

func TestCompareVersions(t *testing.T) {
	// upstream's documented order
	order := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"}
	for i := range order {
		for j := range order {
			c := CompareVersions(order[i], order[j])
			switch {
			case i < j && c <= 0, i > j && c >= 0, i == j && c != 0:
				t.Errorf("CompareVersions(%s, %s) = %d", order[i], order[j], c)
			}
		}
	}
}
