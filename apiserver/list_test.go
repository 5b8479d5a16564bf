package apiserver

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

type widgetList struct {
	Kind     string `json:"kind"`
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []widget `json:"items"`
}

func names(ws []widget) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

func TestListSelectors(t *testing.T) {
	e := newEnv(t)
	e.createNS("other")
	for i := 0; i < 6; i++ {
		tier := "fe"
		if i%2 == 1 {
			tier = "be"
		}
		color := "red"
		if i >= 3 {
			color = "green"
		}
		e.createWidget(fmt.Sprintf("w%d", i), map[string]string{"tier": tier, "idx": fmt.Sprint(i)}, map[string]any{"color": color})
	}
	e.must(201, "POST", "/apis/example.com/v1/namespaces/other/widgets", `{"metadata":{"name":"o","labels":{"tier":"fe"}}}`)
	e.must(200, "PUT", widgetsPath+"/w0/status", `{"metadata":{"name":"w0"},"status":{"phase":"Running"}}`)
	cases := []struct {
		name  string
		path  string
		query url.Values
		want  []string
	}{
		{"label equality", widgetsPath, url.Values{"labelSelector": {"tier=fe"}}, []string{"w0", "w2", "w4"}},
		{"label inequality", widgetsPath, url.Values{"labelSelector": {"tier!=fe"}}, []string{"w1", "w3", "w5"}},
		{"label two terms", widgetsPath, url.Values{"labelSelector": {"tier=fe,idx=2"}}, []string{"w2"}},
		{"label exists", widgetsPath, url.Values{"labelSelector": {"idx"}}, []string{"w0", "w1", "w2", "w3", "w4", "w5"}},
		{"label not exists", widgetsPath, url.Values{"labelSelector": {"!idx"}}, []string{}},
		{"field name", widgetsPath, url.Values{"fieldSelector": {"metadata.name=w3"}}, []string{"w3"}},
		{"field spec", widgetsPath, url.Values{"fieldSelector": {"spec.color=green"}}, []string{"w3", "w4", "w5"}},
		{"field status", widgetsPath, url.Values{"fieldSelector": {"status.phase=Running"}}, []string{"w0"}},
		{"field and label", widgetsPath, url.Values{"fieldSelector": {"spec.color=red"}, "labelSelector": {"tier=be"}}, []string{"w1"}},
		{"all namespaces", "/apis/example.com/v1/widgets", url.Values{"labelSelector": {"tier=fe"}}, []string{"o", "w0", "w2", "w4"}},
		{"all namespaces by namespace field", "/apis/example.com/v1/widgets", url.Values{"fieldSelector": {"metadata.namespace=other"}}, []string{"o"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			var l widgetList
			e.must(200, "GET", tc.path+"?"+tc.query.Encode(), nil).into(t, &l)
			got := names(l.Items)
			// all-namespace lists are in key order: default/... before other/...
			if fmt.Sprint(sortStrings(got)) != fmt.Sprint(sortStrings(tc.want)) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	e.t = t
	r := e.must(400, "GET", widgetsPath+"?fieldSelector=spec.size%3D1", nil)
	if st := r.status(t); st.Message != "field label not supported: spec.size" {
		t.Errorf("message %q", st.Message)
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestListPagination(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 25; i++ {
		lbl := map[string]string{"even": fmt.Sprint(i%2 == 0)}
		e.createWidget(fmt.Sprintf("w%02d", i), lbl, nil)
	}
	cases := []struct {
		name     string
		selector string
		limit    int
		want     int
		pages    int
	}{
		{"no selector", "", 10, 25, 3},
		{"exact pages", "", 5, 25, 5},
		{"limit larger than all", "", 100, 25, 1},
		{"with selector", "even=true", 4, 13, 4},
		{"selector filling the last page", "even=false", 6, 12, 3}, // w24 follows w23: a third, empty page
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			var all []string
			cont := ""
			pages := 0
			firstRV := ""
			for {
				q := url.Values{"limit": {fmt.Sprint(tc.limit)}}
				if tc.selector != "" {
					q.Set("labelSelector", tc.selector)
				}
				if cont != "" {
					q.Set("continue", cont)
				}
				var l widgetList
				e.must(200, "GET", widgetsPath+"?"+q.Encode(), nil).into(t, &l)
				pages++
				if len(l.Items) > tc.limit {
					t.Fatalf("page of %d > limit %d", len(l.Items), tc.limit)
				}
				if firstRV == "" {
					firstRV = l.Metadata.ResourceVersion
				} else if l.Metadata.ResourceVersion != firstRV {
					t.Errorf("page rv %s, first %s", l.Metadata.ResourceVersion, firstRV)
				}
				all = append(all, names(l.Items)...)
				cont = l.Metadata.Continue
				if cont == "" {
					break
				}
				if pages > 50 {
					t.Fatal("pagination does not end")
				}
			}
			if len(all) != tc.want || pages != tc.pages {
				t.Fatalf("got %d items in %d pages, want %d in %d: %v", len(all), pages, tc.want, tc.pages, all)
			}
			seen := map[string]bool{}
			for i, n := range all {
				if seen[n] || (i > 0 && all[i-1] >= n) {
					t.Fatalf("items not in strictly increasing order: %v", all)
				}
				seen[n] = true
			}
		})
	}
}

func TestCheckListOptions(t *testing.T) {
	for _, tc := range []struct {
		query string
		code  int // 0: accepted
	}{
		{"", 0},
		{"resourceVersion=0", 0},
		{"resourceVersion=42", 0},
		{"resourceVersion=42&resourceVersionMatch=NotOlderThan", 0},
		{"resourceVersion=42&resourceVersionMatch=Exact", 0},
		{"resourceVersion=0&resourceVersionMatch=NotOlderThan", 0},
		{"resourceVersion=abc", 400},
		{"resourceVersion=-1", 400},
		{"resourceVersionMatch=NotOlderThan", 422},
		{"resourceVersion=1&resourceVersionMatch=Bogus", 422},
		{"resourceVersion=0&resourceVersionMatch=Exact", 422},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		err = checkListOptions(q)
		got := 0
		if err != nil {
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("%q: %v is no StatusError", tc.query, err)
			}
			got = int(se.status.Code)
		}
		if got != tc.code {
			t.Errorf("%q: code %d (%v), want %d", tc.query, got, err, tc.code)
		}
	}
}
