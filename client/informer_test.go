package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// mkWidget creates a widget through the API and returns the stored object.
func mkWidget(t *testing.T, c *client.Client, ns, name, color string) *widget {
	t.Helper()
	w := &widget{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"app": "demo"}}, Spec: widgetSpec{Color: color}}
	if err := c.Create(ctxT(t), widgets, ns, w); err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return w
}

func setColor(t *testing.T, c *client.Client, ns, name, color string) *widget {
	t.Helper()
	var w widget
	if err := c.Get(ctxT(t), widgets, ns, name, &w); err != nil {
		t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	w.Spec.Color = color
	if err := c.Update(ctxT(t), widgets, ns, &w); err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return &w
}

func rmWidget(t *testing.T, c *client.Client, ns, name string) {
	t.Helper()
	if err := c.Delete(ctxT(t), widgets, ns, name, client.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
}

func id(ns, name, rv string) string { return ns + "/" + name + "@" + rv }

func TestInformerListThenWatch(t *testing.T) {
	f, g, c := startGatedFixture(t)
	w1 := mkWidget(t, c, "a", "w1", "red")
	w2 := mkWidget(t, c, "b", "w2", "blue")
	w3 := mkWidget(t, c, "a", "w3", "red")

	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
	client.SetInformerTunables(inf, 2, 10*time.Millisecond, 100*time.Millisecond) // two pages
	rec := newRecorder(t)
	rec.synced = inf.HasSynced
	inf.AddEventHandler(rec)
	if inf.HasSynced() {
		t.Fatal("HasSynced before Run")
	}
	stop := runInformer(t, inf, rec)
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("WaitForCacheSync returned false")
	}

	// The first list, two pages, delivered as adds before HasSynced.
	want := []string{id("a", "w1", w1.ResourceVersion), id("a", "w3", w3.ResourceVersion), id("b", "w2", w2.ResourceVersion)}
	got := rec.log()
	slices.Sort(got)
	if !slices.Equal(got, []string{"add " + want[0], "add " + want[1], "add " + want[2]}) {
		t.Fatalf("after sync: calls %q, want adds of %q", got, want)
	}
	rec.mu.Lock()
	if slices.Contains(rec.syncedAtCall, true) {
		t.Errorf("HasSynced was true during the first list's adds: %v", rec.syncedAtCall)
	}
	rec.mu.Unlock()
	if n := g.listCount(); n != 2 {
		t.Errorf("list requests = %d, want 2 (two pages)", n)
	}
	listRV := inf.LastSyncResourceVersion()
	if listRV != w3.ResourceVersion {
		t.Errorf("LastSyncResourceVersion = %q, want the list's %q", listRV, w3.ResourceVersion)
	}
	f.mu.Lock()
	var limits []string
	for _, r := range f.requests {
		if r.Method == http.MethodGet && r.Query.Get("watch") == "" && r.EscapedPath == "/api/v1/widgets" {
			limits = append(limits, r.Query.Get("limit"))
		}
	}
	f.mu.Unlock()
	if !slices.Equal(limits, []string{"2", "2"}) {
		t.Errorf("list limits %q, want two pages of 2", limits)
	}

	// Typed objects with apiVersion and kind, in the cache.
	obj, ok := inf.Get("a", "w1")
	if !ok {
		t.Fatal("Get a/w1: not cached")
	}
	if w, ok := obj.(*widget); !ok || w.Spec.Color != "red" || w.Kind != "Widget" || w.APIVersion != "v1" {
		t.Fatalf("Get a/w1 = %#v, want a *widget, red, v1 Widget", obj)
	}
	if _, ok := inf.Get("b", "w1"); ok {
		t.Error("Get b/w1 found an object in the wrong namespace")
	}

	// Watch events, in order.
	n := len(rec.log())
	w4 := mkWidget(t, c, "b", "w4", "green")
	w1b := setColor(t, c, "a", "w1", "blue")
	rmWidget(t, c, "b", "w2")
	w3b := setColor(t, c, "a", "w3", "green")
	rec.waitCalls(t, n+4)
	wantEvents := []string{
		"add " + id("b", "w4", w4.ResourceVersion),
		"update " + id("a", "w1", w1.ResourceVersion) + "->" + w1b.ResourceVersion,
		// The fixture gives a deletion its own revision.
		"delete " + id("b", "w2", prevRV(t, w3b.ResourceVersion)),
		"update " + id("a", "w3", w3.ResourceVersion) + "->" + w3b.ResourceVersion,
	}
	if got := rec.since(n); !slices.Equal(got, wantEvents) {
		t.Fatalf("watch calls:\n got %q\nwant %q", got, wantEvents)
	}
	if got := sortedIDs(inf.List()); !slices.Equal(got, []string{
		id("a", "w1", w1b.ResourceVersion), id("a", "w3", w3b.ResourceVersion), id("b", "w4", w4.ResourceVersion),
	}) {
		t.Fatalf("List = %q", got)
	}
	if rv := inf.LastSyncResourceVersion(); rv != w3b.ResourceVersion {
		t.Errorf("LastSyncResourceVersion = %q, want %q", rv, w3b.ResourceVersion)
	}
	if starts := g.watchStarts(); !slices.Equal(starts, []string{listRV}) {
		t.Errorf("watches started from %q, want one from the list's %q", starts, listRV)
	}
	stop()
	// The server sees the stream end once the cancelled request reaches it.
	waitFor(t, "the server to see the watch end", func() bool { return g.activeWatches() == 0 })
}

// prevRV is rv - 1 (the fixture's revisions are consecutive integers).
func prevRV(t *testing.T, rv string) string {
	t.Helper()
	return strconv.Itoa(atoiT(t, rv) - 1)
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resourceVersion %q is not a number", s)
	}
	return n
}

func TestInformerResumesDroppedStreamWithoutRelist(t *testing.T) {
	_, g, c := startGatedFixture(t)
	w1 := mkWidget(t, c, "a", "w1", "red")
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
	client.SetInformerTunables(inf, 500, 10*time.Millisecond, 100*time.Millisecond)
	rec := newRecorder(t)
	inf.AddEventHandler(rec)
	runInformer(t, inf, rec)
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("no sync")
	}
	waitFor(t, "first watch", func() bool { return g.activeWatches() == 1 })

	// One change on the first stream, so the last seen RV is an event's.
	w2 := mkWidget(t, c, "a", "w2", "red")
	rec.waitCalls(t, 2)

	// Drop the stream and change things while the informer is away.
	release := g.holdWatches()
	g.dropWatches()
	waitFor(t, "the re-watch", func() bool { return len(g.watchStarts()) == 2 })
	w1b := setColor(t, c, "a", "w1", "blue")
	rmWidget(t, c, "a", "w2")
	w3 := mkWidget(t, c, "a", "w3", "red")
	release()

	got := rec.waitCalls(t, 5)
	want := []string{
		"add " + id("a", "w1", w1.ResourceVersion),
		"add " + id("a", "w2", w2.ResourceVersion),
		"update " + id("a", "w1", w1.ResourceVersion) + "->" + w1b.ResourceVersion,
		"delete " + id("a", "w2", prevRV(t, w3.ResourceVersion)),
		"add " + id("a", "w3", w3.ResourceVersion),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("calls:\n got %q\nwant %q", got, want)
	}
	if n := g.listCount(); n != 1 {
		t.Errorf("list requests = %d, want 1: a dropped stream must not relist", n)
	}
	if starts := g.watchStarts(); len(starts) != 2 || starts[1] != w2.ResourceVersion {
		t.Errorf("watches started from %q, want the second from the last seen %q", starts, w2.ResourceVersion)
	}

	// A second drop with nothing new resumes from the newest RV.
	g.dropWatches()
	waitFor(t, "the third watch", func() bool { return len(g.watchStarts()) == 3 && g.activeWatches() == 1 })
	if starts := g.watchStarts(); starts[2] != w3.ResourceVersion {
		t.Errorf("third watch from %q, want %q", starts[2], w3.ResourceVersion)
	}
	w4 := mkWidget(t, c, "a", "w4", "red")
	if got := rec.waitCalls(t, 6); got[5] != "add "+id("a", "w4", w4.ResourceVersion) {
		t.Fatalf("after the second resume: %q", got[5:])
	}
	if n := g.listCount(); n != 1 {
		t.Errorf("list requests = %d, want 1", n)
	}
}

func TestInformerRelistsOnGone(t *testing.T) {
	tests := []struct {
		name string
		// expire makes the informer's next watch fail with 410 Gone.
		expire func(f *fixture, g *streamGate)
	}{
		{name: "ERROR event after compaction", expire: func(f *fixture, g *streamGate) { f.compact() }},
		{name: "410 response", expire: func(f *fixture, g *streamGate) { g.failNextWatch(http.StatusGone) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, g, c := startGatedFixture(t)
			w1 := mkWidget(t, c, "a", "w1", "red")
			w2 := mkWidget(t, c, "a", "w2", "red")
			w3 := mkWidget(t, c, "b", "w3", "red")
			inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
			client.SetInformerTunables(inf, 500, 10*time.Millisecond, 100*time.Millisecond)
			inf.AddIndexer("color", func(o api.Object) []string { return []string{o.(*widget).Spec.Color} })
			rec := newRecorder(t)
			inf.AddEventHandler(rec)
			runInformer(t, inf, rec)
			if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
				t.Fatal("no sync")
			}
			waitFor(t, "first watch", func() bool { return g.activeWatches() == 1 })
			n := len(rec.log())

			release := g.holdWatches()
			g.dropWatches()
			waitFor(t, "the re-watch", func() bool { return len(g.watchStarts()) == 2 })
			rmWidget(t, c, "a", "w1")
			w2b := setColor(t, c, "a", "w2", "blue")
			w4 := mkWidget(t, c, "b", "w4", "green")
			tc.expire(f, g)
			release()

			got := rec.waitCalls(t, n+3)[n:]
			slices.Sort(got)
			want := []string{
				"add " + id("b", "w4", w4.ResourceVersion),
				"delete " + id("a", "w1", w1.ResourceVersion), // the last cached state
				"update " + id("a", "w2", w2.ResourceVersion) + "->" + w2b.ResourceVersion,
			}
			if !slices.Equal(got, want) {
				t.Fatalf("relist diff:\n got %q\nwant %q", got, want)
			}
			if n := g.listCount(); n != 2 {
				t.Errorf("list requests = %d, want 2 (one relist)", n)
			}
			wantCache := []string{id("a", "w2", w2b.ResourceVersion), id("b", "w3", w3.ResourceVersion), id("b", "w4", w4.ResourceVersion)}
			if got := sortedIDs(inf.List()); !slices.Equal(got, wantCache) {
				t.Fatalf("cache after relist %q, want %q", got, wantCache)
			}
			if got := sortedIDs(inf.ByIndex("color", "red")); !slices.Equal(got, []string{id("b", "w3", w3.ResourceVersion)}) {
				t.Errorf("color=red after relist: %q", got)
			}
			if got := sortedIDs(inf.ByIndex(client.NamespaceIndex, "a")); !slices.Equal(got, []string{id("a", "w2", w2b.ResourceVersion)}) {
				t.Errorf("namespace=a after relist: %q", got)
			}
			if rv := inf.LastSyncResourceVersion(); rv != w4.ResourceVersion {
				t.Errorf("LastSyncResourceVersion = %q, want the relist's %q", rv, w4.ResourceVersion)
			}

			// The watch resumes from the relist's RV and events flow again.
			waitFor(t, "the watch after the relist", func() bool { return g.activeWatches() == 1 })
			if starts := g.watchStarts(); starts[len(starts)-1] != w4.ResourceVersion {
				t.Errorf("watches started from %q, want the last from the relist's %q", starts, w4.ResourceVersion)
			}
			rmWidget(t, c, "b", "w3")
			if got := rec.waitCalls(t, n+4); !slices.Equal(got[n+3:], []string{"delete " + id("b", "w3", strconv.Itoa(atoiT(t, w4.ResourceVersion)+1))}) {
				t.Fatalf("after relist: %q", got[n+3:])
			}
		})
	}
}

func TestInformerIndexers(t *testing.T) {
	_, _, c := startGatedFixture(t)
	mkWidget(t, c, "a", "w1", "red")
	mkWidget(t, c, "a", "w2", "blue")
	mkWidget(t, c, "b", "w3", "red")
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
	inf.AddIndexer("color", func(o api.Object) []string { return []string{o.(*widget).Spec.Color} })
	// Several values per object, and none.
	inf.AddIndexer("letters", func(o api.Object) []string {
		if o.(*widget).Spec.Color == "blue" {
			return nil
		}
		return []string{"x", "y"}
	})
	rec := newRecorder(t)
	inf.AddEventHandler(rec)
	runInformer(t, inf, rec)
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("no sync")
	}

	names := func(objs []api.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetObjectMeta().Namespace+"/"+o.GetObjectMeta().Name)
		}
		slices.Sort(out)
		return out
	}
	check := func(step string, want map[[2]string][]string) {
		t.Helper()
		for k, w := range want {
			if got := names(inf.ByIndex(k[0], k[1])); !slices.Equal(got, w) {
				t.Errorf("%s: ByIndex(%q, %q) = %q, want %q", step, k[0], k[1], got, w)
			}
		}
	}
	check("after list", map[[2]string][]string{
		{"color", "red"}:             {"a/w1", "b/w3"},
		{"color", "blue"}:            {"a/w2"},
		{"color", "green"}:           nil,
		{"letters", "x"}:             {"a/w1", "b/w3"},
		{"letters", "y"}:             {"a/w1", "b/w3"},
		{client.NamespaceIndex, "a"}: {"a/w1", "a/w2"},
		{client.NamespaceIndex, "b"}: {"b/w3"},
		{"no-such-index", "red"}:     nil,
	})

	setColor(t, c, "a", "w1", "blue") // moves between values
	rmWidget(t, c, "b", "w3")         // leaves every index
	mkWidget(t, c, "b", "w4", "green")
	rec.waitCalls(t, 6)
	check("after events", map[[2]string][]string{
		{"color", "red"}:             nil,
		{"color", "blue"}:            {"a/w1", "a/w2"},
		{"color", "green"}:           {"b/w4"},
		{"letters", "x"}:             {"b/w4"},
		{client.NamespaceIndex, "b"}: {"b/w4"},
	})

	// An indexer added late indexes what is cached.
	inf.AddIndexer("name", func(o api.Object) []string { return []string{o.GetObjectMeta().Name} })
	check("late indexer", map[[2]string][]string{{"name", "w2"}: {"a/w2"}, {"name", "w3"}: nil})
}

func TestInformerLateHandler(t *testing.T) {
	_, _, c := startGatedFixture(t)
	w1 := mkWidget(t, c, "a", "w1", "red")
	w2 := mkWidget(t, c, "a", "w2", "red")
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{Namespace: "a"})
	early := newRecorder(t)
	inf.AddEventHandler(early)
	late := newRecorder(t)
	runInformer(t, inf, early, late)
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("no sync")
	}
	w1b := setColor(t, c, "a", "w1", "blue")
	mkWidget(t, c, "b", "other", "red") // another namespace: not seen
	early.waitCalls(t, 3)

	inf.AddEventHandler(late)
	got := late.waitCalls(t, 2)
	slices.Sort(got)
	if want := []string{"add " + id("a", "w1", w1b.ResourceVersion), "add " + id("a", "w2", w2.ResourceVersion)}; !slices.Equal(got, want) {
		t.Fatalf("late handler's first calls %q, want %q", got, want)
	}
	w3 := mkWidget(t, c, "a", "w3", "red")
	want := "add " + id("a", "w3", w3.ResourceVersion)
	if got := late.waitCalls(t, 3); len(got) != 3 || got[2] != want {
		t.Fatalf("late handler: %q, want then %q", got, want)
	}
	if got := early.waitCalls(t, 4); len(got) != 4 || got[3] != want ||
		got[2] != "update "+id("a", "w1", w1.ResourceVersion)+"->"+w1b.ResourceVersion {
		t.Fatalf("early handler: %q", got)
	}
}

func TestInformerResync(t *testing.T) {
	_, _, c := startGatedFixture(t)
	mkWidget(t, c, "a", "w1", "red")
	mkWidget(t, c, "a", "w2", "red")
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{ResyncPeriod: 20 * time.Millisecond})
	rec := newRecorder(t)
	inf.AddEventHandler(rec)
	runInformer(t, inf, rec)
	got := rec.waitCalls(t, 6) // two adds, then at least two resyncs of both
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for k := 2; k < len(got); k++ {
		if rec.olds[k] == nil || rec.olds[k] != rec.objs[k] {
			t.Fatalf("call %d %q is not OnUpdate(obj, obj) with the cached object", k, got[k])
		}
	}
}

func TestInformerRunTwiceAndStop(t *testing.T) {
	_, g, c := startGatedFixture(t)
	mkWidget(t, c, "a", "w1", "red")
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
	rec := newRecorder(t)
	inf.AddEventHandler(rec)
	stop := runInformer(t, inf, rec)
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("no sync")
	}
	if err := inf.Run(ctxT(t)); !errors.Is(err, client.ErrInformerRunning) {
		t.Fatalf("second Run = %v, want ErrInformerRunning", err)
	}
	waitFor(t, "the watch", func() bool { return g.activeWatches() == 1 })
	stop() // checks Run's nil, no goroutines, no handler call afterwards
	waitFor(t, "the server to see the watch end", func() bool { return g.activeWatches() == 0 })
	mkWidget(t, c, "a", "w2", "red")
	time.Sleep(50 * time.Millisecond) // a handler call would fail the test via rec.stopped
	if inf.HasSynced() != true {
		t.Error("HasSynced went back to false")
	}
}

func TestInformerBacksOffWhileServerFails(t *testing.T) {
	f, g, c := startGatedFixture(t)
	mkWidget(t, c, "a", "w1", "red")
	f.mu.Lock()
	f.failNext = http.StatusInternalServerError
	f.mu.Unlock()
	inf := client.NewInformer(c, typedWidgets, client.InformerOptions{})
	client.SetInformerTunables(inf, 500, 20*time.Millisecond, 100*time.Millisecond)
	runInformer(t, inf)
	// The failed list is retried after a back-off and then succeeds.
	if !client.WaitForCacheSync(ctxT(t), inf.HasSynced) {
		t.Fatal("no sync")
	}
	if n := g.listCount(); n != 2 {
		t.Errorf("list requests = %d, want 2 (one failure, one retry)", n)
	}
	if _, ok := inf.Get("a", "w1"); !ok {
		t.Error("a/w1 not cached after the retry")
	}
}

func TestWaitForCacheSync(t *testing.T) {
	yes := func() bool { return true }
	no := func() bool { return false }
	tests := []struct {
		name   string
		synced []func() bool
		want   bool
	}{
		{name: "none", want: true},
		{name: "all synced", synced: []func() bool{yes, yes}, want: true},
		{name: "one never syncs", synced: []func() bool{yes, no}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if got := client.WaitForCacheSync(ctx, tc.synced...); got != tc.want {
				t.Fatalf("WaitForCacheSync = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHandlerFuncsSkipsNil(t *testing.T) {
	var adds, updates, deletes int
	obj := &widget{}
	tests := []struct {
		name string
		h    client.HandlerFuncs
		want [3]int
	}{
		{name: "all nil", h: client.HandlerFuncs{}, want: [3]int{0, 0, 0}},
		{name: "add only", h: client.HandlerFuncs{AddFunc: func(api.Object) { adds++ }}, want: [3]int{1, 0, 0}},
		{name: "all", h: client.HandlerFuncs{
			AddFunc:    func(api.Object) { adds++ },
			UpdateFunc: func(o, n api.Object) { updates++ },
			DeleteFunc: func(api.Object) { deletes++ },
		}, want: [3]int{1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			adds, updates, deletes = 0, 0, 0
			var h client.EventHandler = tc.h
			h.OnAdd(obj)
			h.OnUpdate(obj, obj)
			h.OnDelete(obj)
			if got := [3]int{adds, updates, deletes}; got != tc.want {
				t.Fatalf("calls = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInformerRunRejectsImpossibleConfig(t *testing.T) {
	_, g, c := startGatedFixture(t)
	tests := []struct {
		name string
		info *api.ResourceInfo
		opts client.InformerOptions
	}{
		{name: "no New", info: widgets},
		{name: "namespace for a cluster-scoped resource", info: &api.ResourceInfo{
			Version: "v1", Resource: "nodes", Kind: "Node", New: func() api.Object { return &widget{} },
		}, opts: client.InformerOptions{Namespace: "a"}},
		{name: "bad namespace", info: typedWidgets, opts: client.InformerOptions{Namespace: "a/b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := client.NewInformer(c, tc.info, tc.opts).Run(ctxT(t))
			if !errors.Is(err, client.ErrInvalidRequest) {
				t.Fatalf("Run = %v, want ErrInvalidRequest", err)
			}
		})
	}
	if n := g.listCount(); n != 0 {
		t.Errorf("%d list requests sent for impossible informers", n)
	}
}
