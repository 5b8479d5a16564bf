package web_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestI18nComplete: every string the app asks for (t('key'), and
// data-i18n="key" in the HTML) exists in English and in Chinese, and the
// two dictionaries have the same keys with the same {placeholders}.
func TestI18nComplete(t *testing.T) {
	src, err := os.ReadFile("assets/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	enAt, zhAt, endAt := strings.Index(s, "const en = {"), strings.Index(s, "const zh = {"), strings.Index(s, "const dicts")
	if enAt < 0 || zhAt < enAt || endAt < zhAt {
		t.Fatal("assets/i18n.js: the en and zh dictionaries not found")
	}
	entry := regexp.MustCompile(`'([a-zA-Z.]+)':\s*'((?:[^'\\]|\\.)*)'`)
	dict := func(body string) map[string]string {
		m := map[string]string{}
		for _, e := range entry.FindAllStringSubmatch(body, -1) {
			m[e[1]] = e[2]
		}
		return m
	}
	en, zh := dict(s[enAt:zhAt]), dict(s[zhAt:endAt])
	if len(en) < 100 {
		t.Fatalf("only %d English strings parsed", len(en))
	}
	ph := regexp.MustCompile(`\{\w+\}`)
	for k, v := range en {
		z, ok := zh[k]
		if !ok {
			t.Errorf("%q has no Chinese", k)
			continue
		}
		a, b := ph.FindAllString(v, -1), ph.FindAllString(z, -1)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%q: placeholders %v in English, %v in Chinese", k, a, b)
		}
	}
	for k := range zh {
		if _, ok := en[k]; !ok {
			t.Errorf("%q is only in Chinese", k)
		}
	}
	// The keys the app uses.
	used := map[string]bool{}
	files, _ := os.ReadDir("assets")
	call := regexp.MustCompile(`\bt\('([a-zA-Z.]+)'\s*[,)]`) // not t('live.' + kind)
	attr := regexp.MustCompile(`data-i18n="([a-zA-Z.]+)"`)
	for _, f := range files {
		b, err := os.ReadFile("assets/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{call, attr} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				used[m[1]] = true
			}
		}
	}
	if len(used) < 80 {
		t.Fatalf("only %d keys found in use", len(used))
	}
	for k := range used {
		if _, ok := en[k]; !ok {
			t.Errorf("the app asks for %q, which no dictionary has", k)
		}
	}
}
