package api

import (
	"strconv"
	"strings"
)

// CompareVersions orders two version names as kube-apiserver's version
// priority does: >0 when a comes first. GA, then beta, then alpha, the
// higher number first; other names last, alphabetically. It orders a
// group's versions in discovery, the first being the preferred one.
func CompareVersions(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	switch {
	case ka.class != kb.class:
		return kb.class - ka.class // lower class first
	case ka.class == classOther:
		return strings.Compare(b, a) // alphabetical: a first when smaller
	case ka.major != kb.major:
		return ka.major - kb.major
	default:
		return ka.minor - kb.minor
	}
}

const (
	classGA = iota
	classBeta
	classAlpha
	classOther
)

type vkey struct{ class, major, minor int }

func versionKey(v string) vkey {
	if !strings.HasPrefix(v, "v") {
		return vkey{class: classOther}
	}
	rest := v[1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || rest[0] == '0' {
		return vkey{class: classOther}
	}
	major, _ := strconv.Atoi(rest[:i])
	rest = rest[i:]
	if rest == "" {
		return vkey{class: classGA, major: major}
	}
	for _, s := range []struct {
		pre   string
		class int
	}{{"beta", classBeta}, {"alpha", classAlpha}} {
		if num, ok := strings.CutPrefix(rest, s.pre); ok {
			minor, err := strconv.Atoi(num)
			if err != nil || num == "" || num[0] == '0' {
				return vkey{class: classOther}
			}
			return vkey{class: s.class, major: major, minor: minor}
		}
	}
	return vkey{class: classOther}
}
