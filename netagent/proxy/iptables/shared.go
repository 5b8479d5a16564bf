package iptables

// sharedSet is what the backend knows of the shared nat chains
// (KUBE-SERVICES, KUBE-NODEPORTS): every rule, by key (chain and spec),
// and by target chain.
type sharedSet struct {
	rules    map[string]rule
	byTarget map[string]map[string]bool
}

func newSharedSet() *sharedSet {
	return &sharedSet{rules: map[string]rule{}, byTarget: map[string]map[string]bool{}}
}

func sharedKey(r rule) string { return r.chain + " " + r.spec() }

func (s *sharedSet) add(r rule) {
	k := sharedKey(r)
	s.rules[k] = r
	t := r.target()
	if s.byTarget[t] == nil {
		s.byTarget[t] = map[string]bool{}
	}
	s.byTarget[t][k] = true
}

func (s *sharedSet) remove(k string) {
	r, ok := s.rules[k]
	if !ok {
		return
	}
	delete(s.rules, k)
	t := r.target()
	delete(s.byTarget[t], k)
	if len(s.byTarget[t]) == 0 {
		delete(s.byTarget, t)
	}
}

// sharedView is a sharedSet with pending changes on top; apply commits
// them once the restore succeeded.
type sharedView struct {
	base    *sharedSet
	added   map[string]rule
	removed map[string]bool
}

func (v *sharedView) has(k string) bool {
	if _, ok := v.added[k]; ok {
		return true
	}
	_, ok := v.base.rules[k]
	return ok && !v.removed[k]
}

func (v *sharedView) add(r rule) {
	k := sharedKey(r)
	delete(v.removed, k)
	v.added[k] = r
}

func (v *sharedView) remove(k string) {
	delete(v.added, k)
	if _, ok := v.base.rules[k]; ok {
		v.removed[k] = true
	}
}

// targeting lists the rules jumping to chain.
func (v *sharedView) targeting(chain string) []rule {
	var out []rule
	for k := range v.base.byTarget[chain] {
		if !v.removed[k] {
			out = append(out, v.base.rules[k])
		}
	}
	for _, r := range v.added {
		if r.target() == chain {
			out = append(out, r)
		}
	}
	return out
}

func (v *sharedView) apply() {
	for k := range v.removed {
		v.base.remove(k)
	}
	for _, r := range v.added {
		v.base.add(r)
	}
}
