package dns

import (
	"container/list"
	"sync"
	"time"

	mdns "github.com/miekg/dns"
)

// Caps on how long a forwarded answer is kept, whatever TTL it carries.
const (
	maxPositiveTTL = time.Hour
	maxNegativeTTL = 5 * time.Minute
)

type cacheKey struct {
	name   string // lowercase
	qtype  uint16
	qclass uint16
}

type cacheEntry struct {
	key     cacheKey
	msg     *mdns.Msg // Rcode, Answer, Ns, Extra (no OPT); read-only
	stored  time.Time
	expires time.Time
}

// answerCache is a fixed-size LRU of forwarded answers, each kept for the
// smallest TTL in it (capped). Entries are read-only once stored: a hit is
// copied, with TTLs lowered by the entry's age.
type answerCache struct {
	mu    sync.Mutex
	size  int
	items map[cacheKey]*list.Element // of *cacheEntry
	lru   list.List                  // front: most recently used
}

func newAnswerCache(size int) *answerCache {
	if size <= 0 {
		return nil
	}
	return &answerCache{size: size, items: make(map[cacheKey]*list.Element)}
}

func (c *answerCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// get returns the cached answer of k and its age, or false.
func (c *answerCache) get(k cacheKey, now time.Time) (*mdns.Msg, time.Duration, bool) {
	if c == nil {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.items[k]
	if el == nil {
		return nil, 0, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.lru.Remove(el)
		delete(c.items, k)
		return nil, 0, false
	}
	c.lru.MoveToFront(el)
	return e.msg, now.Sub(e.stored), true
}

// put stores m under k for ttl (if positive), evicting the least recently
// used entry when full.
func (c *answerCache) put(k cacheKey, m *mdns.Msg, ttl time.Duration, now time.Time) {
	if c == nil || ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &cacheEntry{key: k, msg: m, stored: now, expires: now.Add(ttl)}
	if el := c.items[k]; el != nil {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.items[k] = c.lru.PushFront(e)
	for len(c.items) > c.size {
		el := c.lru.Back()
		c.lru.Remove(el)
		delete(c.items, el.Value.(*cacheEntry).key)
	}
}

// cacheTTL is how long an upstream answer may be cached: the smallest TTL of
// its records for a positive answer, the SOA's negative TTL (RFC 2308) for
// NXDOMAIN and NODATA, capped; 0 for anything else (SERVFAIL, REFUSED, a
// negative answer without SOA, a zero TTL).
func cacheTTL(m *mdns.Msg) time.Duration {
	switch m.Rcode {
	case mdns.RcodeSuccess:
		if len(m.Answer) > 0 {
			ttl := uint32(1<<32 - 1)
			for _, sec := range [][]mdns.RR{m.Answer, m.Ns} {
				for _, rr := range sec {
					if h := rr.Header(); h.Rrtype != mdns.TypeOPT && h.Ttl < ttl {
						ttl = h.Ttl
					}
				}
			}
			return min(time.Duration(ttl)*time.Second, maxPositiveTTL)
		}
		fallthrough
	case mdns.RcodeNameError:
		for _, rr := range m.Ns {
			if soa, ok := rr.(*mdns.SOA); ok {
				ttl := min(soa.Hdr.Ttl, soa.Minttl)
				return min(time.Duration(ttl)*time.Second, maxNegativeTTL)
			}
		}
	}
	return 0
}
