package patch

import (
	"bytes"
	"fmt"
	"testing"
)

// largeConditions is a Node status with n conditions c0..c(n-1), in
// reverse order when reverse is set, of the given status.
func largeConditions(n int, status string, reverse bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":{"conditions":[`)
	for j := range n {
		i := j
		if reverse {
			i = n - 1 - j
		}
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"c%d","status":%q}`, i, status)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// largeMerge merges a patch naming every one of n original conditions (in
// the opposite order, so that a scan for each would walk half the list)
// plus n new ones.
type largeMerge struct {
	original, patch []byte
}

func newLargeMerge(n int) largeMerge {
	var p bytes.Buffer
	p.WriteString(`{"status":{"conditions":[`)
	for j := range 2 * n {
		if j > 0 {
			p.WriteByte(',')
		}
		fmt.Fprintf(&p, `{"type":"c%d","status":"False"}`, 2*n-1-j)
	}
	p.WriteString(`]}}`)
	return largeMerge{original: largeConditions(n, "True", false), patch: p.Bytes()}
}

func (l largeMerge) apply(tb testing.TB) []byte {
	out, err := Apply(StrategicMergePatch, l.original, l.patch)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestStrategicMergeLargeListIsLinear: merging a keyed list costs work
// linear in its length. A scan of the list per patch element (as a naive
// merge does) allocates a key per comparison, so its allocations grow with
// the square of the length: 400 times from 1,000 to 20,000 elements where
// a linear merge grows 20 times. The bound leaves room for map growth.
func TestStrategicMergeLargeListIsLinear(t *testing.T) {
	small, large := newLargeMerge(1000), newLargeMerge(20000)
	a := testing.AllocsPerRun(1, func() { small.apply(t) })
	b := testing.AllocsPerRun(1, func() { large.apply(t) })
	t.Logf("allocations: %.0f for 1,000 elements, %.0f for 20,000", a, b)
	if b > 30*a {
		t.Errorf("20 times the elements take %.1f times the allocations, want at most 30", b/a)
	}
}

// TestStrategicMergeLargeListResult: the large merge keeps the original's
// order, merges every named element and appends the new ones in the
// patch's order.
func TestStrategicMergeLargeListResult(t *testing.T) {
	const n = 2000
	got := newLargeMerge(n).apply(t)
	var want bytes.Buffer
	want.WriteString(`{"status":{"conditions":[`)
	for i := range n {
		fmt.Fprintf(&want, `{"type":"c%d","status":"False"},`, i)
	}
	for j := range n {
		if j > 0 {
			want.WriteByte(',')
		}
		fmt.Fprintf(&want, `{"type":"c%d","status":"False"}`, 2*n-1-j)
	}
	want.WriteString(`]}}`)
	mustEqualJSON(t, got, want.String())
}

// TestStrategicMergeKeyMatchesFirst: a patch element merges into the first
// element with its key, including one an earlier patch element appended,
// and deletes apply to the original's elements whatever their position in
// the patch.
func TestStrategicMergeKeyMatchesFirst(t *testing.T) {
	for _, c := range []struct{ name, orig, patch, want string }{{
		name:  "duplicate keys in the original: the first merges",
		orig:  `{"status":{"conditions":[{"type":"A","status":"1"},{"type":"A","status":"2"}]}}`,
		patch: `{"status":{"conditions":[{"type":"A","reason":"r"}]}}`,
		want:  `{"status":{"conditions":[{"type":"A","status":"1","reason":"r"},{"type":"A","status":"2"}]}}`,
	}, {
		name:  "a key twice in the patch: the second merges into the first's element",
		orig:  `{"status":{"conditions":[{"type":"A"}]}}`,
		patch: `{"status":{"conditions":[{"type":"B","status":"1"},{"type":"B","reason":"r"}]}}`,
		want:  `{"status":{"conditions":[{"type":"A"},{"type":"B","status":"1","reason":"r"}]}}`,
	}, {
		name:  "a delete after a merge of the same key deletes the original and keeps the patch's",
		orig:  `{"status":{"conditions":[{"type":"A","status":"1"},{"type":"B"}]}}`,
		patch: `{"status":{"conditions":[{"type":"A","reason":"r"},{"type":"A","$patch":"delete"}]}}`,
		want:  `{"status":{"conditions":[{"type":"B"},{"type":"A","reason":"r"}]}}`,
	}, {
		name:  "numbers match whatever their spelling",
		orig:  `{"spec":{"ports":[{"port":80,"name":"a"},{"port":443}]}}`,
		patch: `{"spec":{"ports":[{"port":443.0,"name":"b"},{"port":8e1,"$patch":"delete"}]}}`,
		want:  `{"spec":{"ports":[{"port":443.0,"name":"b"}]}}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Apply(StrategicMergePatch, []byte(c.orig), []byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, out, c.want)
		})
	}
}

// BenchmarkStrategicMergeLargeList merges 1,000 and 20,000 element lists
// (see newLargeMerge); the time per element should not grow with the
// length.
func BenchmarkStrategicMergeLargeList(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		l := newLargeMerge(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.apply(b)
			}
		})
	}
}
