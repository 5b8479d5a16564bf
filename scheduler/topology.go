package scheduler

// The cache's incremental counts behind inter-pod affinity and topology
// spread, and the per-decision state built from them in O(nodes).

// maxGroups bounds the matcher groups the cache keeps counts for; past it
// they are dropped and rebuilt on demand.
const maxGroups = 1024

// matchGroup counts, per node, the counted pods one matcher selects. A
// group is made the first time a pending pod needs it (one pass over the
// counted pods) and then kept up to date as pods are counted and dropped.
type matchGroup struct {
	m       podMatcher
	perNode map[string]int
}

// carriedEntry counts, per node, the counted pods that carry one term.
type carriedEntry struct {
	t       carriedTerm
	perNode map[string]int
	total   int
}

// countTopologyLocked adds (delta 1) or removes (-1) p on node in every
// group and carried-term entry.
func (c *cache) countTopologyLocked(p *podInfo, node string, delta int) {
	for _, g := range c.groups {
		if g.m.matches(p) {
			bump(g.perNode, node, delta)
		}
	}
	for i := range p.carried {
		t := &p.carried[i]
		e, ok := c.carried[t.id]
		if !ok {
			if delta < 0 {
				continue
			}
			e = &carriedEntry{t: *t, perNode: map[string]int{}}
			c.carried[t.id] = e
		}
		bump(e.perNode, node, delta)
		if e.total += delta; e.total <= 0 {
			delete(c.carried, t.id)
		}
	}
}

func bump(m map[string]int, k string, delta int) {
	if m[k] += delta; m[k] <= 0 {
		delete(m, k)
	}
}

// groupLocked returns the counts for m, building them on first use.
func (c *cache) groupLocked(m *podMatcher) *matchGroup {
	if g, ok := c.groups[m.key]; ok {
		return g
	}
	if len(c.groups) >= maxGroups {
		clear(c.groups)
	}
	g := &matchGroup{m: *m, perNode: map[string]int{}}
	for _, ps := range c.pods {
		if g.m.matches(ps.info) {
			g.perNode[ps.node]++
		}
	}
	c.groups[m.key] = g
	return g
}

// topoState is the per-decision state of the InterPodAffinity and
// PodTopologySpread plugins; nil when neither has anything to do.
type topoState struct {
	ip      interPodState
	sp      spreadState
	scoring bool // some score other than the default ones applies
}

// topoStateLocked builds p's state over the existing nodes: O(nodes) per
// term or constraint, plus O(distinct carried terms).
func (c *cache) topoStateLocked(p *podInfo) *topoState {
	x := &topoState{}
	ip := &x.ip
	// Counted pods' terms that select p.
	for _, e := range c.carried {
		if !e.t.m.matches(p) {
			continue
		}
		tc := termCounts{key: e.t.topologyKey, weight: int64(e.t.weight), counts: domainCounts(e.perNode, e.t.topologyKey, c.nodes)}
		if e.t.kind == carriedRequiredAnti {
			ip.existingAnti = append(ip.existingAnti, tc)
			ip.hasFilter = true
		} else if tc.weight != 0 {
			ip.score = append(ip.score, tc)
			ip.hasScore = true
		}
	}
	counts := func(t *affinityTerm) termCounts {
		g := c.groupLocked(&t.m)
		return termCounts{key: t.topologyKey, weight: int64(t.weight), counts: domainCounts(g.perNode, t.topologyKey, c.nodes)}
	}
	if len(p.affinity) > 0 {
		ip.hasFilter = true
		ip.affinityNone, ip.selfAffine = true, true
		for i := range p.affinity {
			tc := counts(&p.affinity[i])
			if len(tc.counts) > 0 {
				ip.affinityNone = false
			}
			if !p.affinity[i].m.matches(p) {
				ip.selfAffine = false
			}
			ip.affinity = append(ip.affinity, tc)
		}
	}
	for i := range p.antiAffinity {
		ip.hasFilter = true
		ip.anti = append(ip.anti, counts(&p.antiAffinity[i]))
	}
	for i := range p.preferred {
		ip.hasScore = true
		ip.score = append(ip.score, counts(&p.preferred[i]))
	}
	if len(p.spread) > 0 {
		var hardKeys, softKeys []string
		for i := range p.spread {
			if p.spread[i].hard {
				hardKeys = append(hardKeys, p.spread[i].topologyKey)
			} else {
				softKeys = append(softKeys, p.spread[i].topologyKey)
			}
		}
		for i := range p.spread {
			sc := &p.spread[i]
			g := c.groupLocked(&sc.m)
			if sc.hard {
				x.sp.hard = append(x.sp.hard, newSpreadCounts(p, sc, hardKeys, g.perNode, c.order))
			} else {
				x.sp.soft = append(x.sp.soft, newSpreadCounts(p, sc, softKeys, g.perNode, c.order))
			}
		}
	}
	x.scoring = ip.hasScore || len(x.sp.soft) > 0 || len(p.preferredNode) > 0
	if !ip.hasFilter && len(x.sp.hard) == 0 && !x.scoring {
		return nil
	}
	return x
}

// fits runs the PodTopologySpread and InterPodAffinity filters.
func (x *topoState) fits(n *nodeInfo) string {
	if r := x.sp.fits(n); r != "" {
		return r
	}
	if x.ip.hasFilter {
		return x.ip.fits(n)
	}
	return ""
}

// candidate is a feasible node with its raw plugin scores.
type candidate struct {
	n       *nodeInfo
	owners  int
	least   int64
	na, ipa int64
	pts     float64
	ptsOK   bool
	total   int64
}

// pickScored normalizes the NodeAffinity, InterPodAffinity and
// PodTopologySpread scores to 0-100 as Kubernetes does, sums them (each
// plugin weighs 2 by default, so equally), and returns the best candidate:
// highest sum, then fewest pods of the owner, then least requested; ties
// keep the scan order.
func pickScored(cs []candidate) *nodeInfo {
	if len(cs) == 0 {
		return nil
	}
	var maxNA, minIPA, maxIPA int64
	minPTS, maxPTS := 0.0, 0.0
	minIPA, maxIPA = cs[0].ipa, cs[0].ipa
	first := true
	for i := range cs {
		c := &cs[i]
		maxNA = max(maxNA, c.na)
		minIPA, maxIPA = min(minIPA, c.ipa), max(maxIPA, c.ipa)
		if c.ptsOK {
			if first {
				minPTS, maxPTS, first = c.pts, c.pts, false
			}
			minPTS, maxPTS = min(minPTS, c.pts), max(maxPTS, c.pts)
		}
	}
	best := -1
	for i := range cs {
		c := &cs[i]
		if maxNA > 0 {
			c.total += c.na * 100 / maxNA
		}
		if maxIPA > minIPA {
			c.total += (c.ipa - minIPA) * 100 / (maxIPA - minIPA)
		}
		if c.ptsOK {
			if maxPTS == 0 {
				c.total += 100
			} else {
				c.total += int64(100 * (maxPTS + minPTS - c.pts) / maxPTS)
			}
		}
		if best < 0 {
			best = i
			continue
		}
		b := &cs[best]
		if c.total != b.total {
			if c.total > b.total {
				best = i
			}
			continue
		}
		if better(c.owners, c.least, b.owners, b.least) {
			best = i
		}
	}
	return cs[best].n
}
