package metricsapi

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// DefaultResolution is how often the nodes are scraped
// (metrics-server's --metric-resolution).
const DefaultResolution = 15 * time.Second

// maxScrapeTimeout bounds one node's scrape.
const maxScrapeTimeout = 10 * time.Second

// maxBody bounds one node's answer.
const maxBody = 16 << 20

// Source reaches the nodes.
type Source interface {
	// ReadyNodes are the names of the nodes whose Ready condition is True.
	ReadyNodes(ctx context.Context) ([]string, error)
	// Scrape GETs the node's /metrics/resource.
	Scrape(ctx context.Context, node string) (io.ReadCloser, error)
}

// Scraper fills a Store from a Source.
type Scraper struct {
	Source     Source
	Store      *Store
	Resolution time.Duration // 0: DefaultResolution
	Log        *slog.Logger
	Now        func() time.Time // nil: time.Now
}

// Run scrapes at once, then every Resolution, until ctx ends.
func (s *Scraper) Run(ctx context.Context) {
	res := s.Resolution
	if res <= 0 {
		res = DefaultResolution
	}
	t := time.NewTicker(res)
	defer t.Stop()
	for {
		s.Store.Add(s.ScrapeOnce(ctx, min(res, maxScrapeTimeout)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Scraper) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// ScrapeOnce scrapes every Ready node at once, each within timeout.
func (s *Scraper) ScrapeOnce(ctx context.Context, timeout time.Duration) Batch {
	nodes, err := s.Source.ReadyNodes(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log().Warn("metrics: listing the nodes", "err", err)
		}
		return Batch{}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var mu sync.Mutex
	b := Batch{}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			rc, err := s.Source.Scrape(ctx, n)
			if err != nil {
				s.log().Debug("metrics: scrape failed", "node", n, "err", err)
				return
			}
			defer rc.Close()
			ns, err := Parse(io.LimitReader(rc, maxBody), now())
			if err != nil {
				s.log().Warn("metrics: unparsable scrape", "node", n, "err", err)
				return
			}
			mu.Lock()
			b[n] = ns
			mu.Unlock()
		})
	}
	wg.Wait()
	return b
}
