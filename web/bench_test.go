package web_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// BenchmarkDashboard measures docs/performance.md's dashboard figures in headless
// chromium against a real server on loopback:
//
//   - first-load: a cold-cache load of the app (already logged in),
//     reported as KB transferred for the page and its assets (the watch
//     stream, which never completes, is data and not counted) and ms until the app has
//     every watched resource and has drawn it (the skiff-interactive
//     performance mark, from navigation start); and, after each load, its
//     floor: the same browser, its cache cleared, navigating to the same
//     server's /readyz (a plain-text page: one HTTPS request, no script),
//     timed from navigation start to its load event's end (floor-ms), and
//     the ratio interactive-over-floor (docs/performance.md, "Floors and
//     ratios");
//
//   - services-1000: drawing the services page with 1,000 Services: the
//     skiff-services-render measure (building the table, the DOM and its
//     layout) and skiff-services-paint (up to the frame after it is
//     painted).
//
//     go test -run '^$' -bench Dashboard -benchtime 20x ./web/
func BenchmarkDashboard(b *testing.B) {
	chromiumPath(b)
	ts := servertest.Start(b, testOptions())
	ctx := newBrowser(b, spkiPin(b, ts.Bundle().ServerTLS))
	base := ts.URL()
	step(b, ctx, "open", chromedp.Navigate(base+"/"))
	login(b, ctx, ts.Bundle().AdminToken)

	b.Run("first-load", func(b *testing.B) {
		var kb, tti, floor float64
		for i := 0; i < b.N; i++ {
			step(b, ctx, "clear the cache", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
				return err
			}), chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/#/overview"))
			waitJS(b, ctx, "interactive", `performance.getEntriesByName('skiff-interactive').length > 0`)
			r := eval[struct {
				Page, TTI float64
			}](b, ctx, `(() => {
				const nav = performance.getEntriesByType('navigation')[0];
				let page = nav.transferSize;
				for (const e of performance.getEntriesByType('resource')) {
					if (!e.name.includes('/ui/watch')) page += e.transferSize;
				}
				return {Page: page, TTI: performance.getEntriesByName('skiff-interactive')[0].startTime};
			})()`)
			kb += r.Page / 1024
			tti += r.TTI
			step(b, ctx, "floor", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
				return err
			}), chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/readyz"))
			floor += eval[float64](b, ctx, `performance.getEntriesByType('navigation')[0].loadEventEnd`)
		}
		// The floor left the browser on /readyz: back to the app, which
		// services-1000 drives by its hash.
		step(b, ctx, "back to the app", chromedp.Navigate(base+"/#/overview"))
		waitJS(b, ctx, "interactive", `performance.getEntriesByName('skiff-interactive').length > 0`)
		n := float64(b.N)
		b.ReportMetric(kb/n, "KB/load")
		b.ReportMetric(tti/n, "ms-interactive")
		b.ReportMetric(floor/n, "floor-ms")
		if floor > 0 {
			b.ReportMetric(tti/floor, "interactive-over-floor")
		}
		b.ReportMetric(0, "ns/op")
	})

	createServices(b, ts, 1000)
	b.Run("services-1000", func(b *testing.B) {
		goTo(b, ctx, "#/services")
		waitJS(b, ctx, "1,000 services", `document.querySelectorAll('#svc-table [role=row][data-service]').length >= 1000`)
		var ms, paint float64
		for i := 0; i < b.N; i++ {
			eval[chromedp.Void](b, ctx, `performance.clearMeasures('skiff-services-render'); performance.clearMeasures('skiff-services-paint'); location.hash = '#/overview'`)
			waitJS(b, ctx, "overview", `document.getElementById('cards')`)
			goTo(b, ctx, "#/services")
			waitJS(b, ctx, "the render", `performance.getEntriesByName('skiff-services-render').length > 0 && document.querySelectorAll('#svc-table [role=row][data-service]').length >= 1000`)
			ms += eval[float64](b, ctx, `performance.getEntriesByName('skiff-services-render')[0].duration`)
			waitJS(b, ctx, "the paint", `performance.getEntriesByName('skiff-services-paint').length > 0`)
			paint += eval[float64](b, ctx, `performance.getEntriesByName('skiff-services-paint')[0].duration`)
		}
		b.ReportMetric(ms/float64(b.N), "ms/render")
		b.ReportMetric(paint/float64(b.N), "ms/render+paint")
		b.ReportMetric(0, "ns/op")
	})
}

// createServices creates n Services in the "bench" namespace, 8 at a time.
func createServices(b *testing.B, ts *servertest.Server, n int) {
	b.Helper()
	ctx := ctxT(b, 2*time.Minute)
	ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "bench"}}
	if err := ts.Client().Create(ctx, api.Lookup(resources, "v1", "namespaces"), "", ns); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := ts.Client().Create(ctx, resServices, "bench", service(fmt.Sprintf("svc-%04d", i), 80)); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
