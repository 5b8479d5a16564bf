package api

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseIndexes parses an Indexed Job's index list ("1,3-5,7", the format
// of status.completedIndexes, status.failedIndexes and a success policy's
// succeededIndexes) into sorted, distinct indexes below completions. The
// intervals must be in increasing order and must not overlap, as
// Kubernetes requires.
func ParseIndexes(s string, completions int32) ([]int32, error) {
	if s == "" {
		return nil, nil
	}
	var out []int32
	prev := int64(-1)
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.ParseInt(lo, 10, 32)
		if err != nil || lo == "" || strings.HasPrefix(lo, "+") {
			return nil, fmt.Errorf("cannot convert string to integer for index: %q", lo)
		}
		last := first
		if isRange {
			last, err = strconv.ParseInt(hi, 10, 32)
			if err != nil || hi == "" || strings.HasPrefix(hi, "+") {
				return nil, fmt.Errorf("cannot convert string to integer for index: %q", hi)
			}
			if last <= first {
				return nil, fmt.Errorf("non-increasing order, previous: %d, current: %d", first, last)
			}
		}
		if first < 0 || last >= int64(completions) {
			return nil, fmt.Errorf("too large index: %q", part)
		}
		if first <= prev {
			return nil, fmt.Errorf("non-increasing order, previous: %d, current: %d", prev, first)
		}
		for i := first; i <= last; i++ {
			out = append(out, int32(i))
		}
		prev = last
	}
	return out, nil
}

// FormatIndexes writes indexes in the completedIndexes format: sorted,
// runs of three or more as first-last ("1,3-5,7"). Duplicates are dropped.
func FormatIndexes(indexes []int32) string {
	if len(indexes) == 0 {
		return ""
	}
	ix := append([]int32(nil), indexes...)
	sort.Slice(ix, func(a, b int) bool { return ix[a] < ix[b] })
	var b strings.Builder
	for i := 0; i < len(ix); {
		j := i
		for j+1 < len(ix) && ix[j+1] <= ix[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		first, last := ix[i], ix[j]
		switch {
		case first == last:
			b.WriteString(strconv.Itoa(int(first)))
		case last == first+1:
			fmt.Fprintf(&b, "%d,%d", first, last)
		default:
			fmt.Fprintf(&b, "%d-%d", first, last)
		}
		i = j + 1
	}
	return b.String()
}
