package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"time"

	berrors "go.etcd.io/bbolt/errors"
	"golang.org/x/sys/unix"
)

// ErrCorrupt: the database file is damaged (see VerifyFile). Errors that
// wrap it say where.
var ErrCorrupt = errors.New("damaged database file")

// bbolt's file format, as go.etcd.io/bbolt v1.5.0 writes it
// (internal/common): little-endian pages of the meta page's page size, each
// starting with a 16-byte header (id u64, flags u16, count u16, overflow
// u32) and the page's elements.
const (
	bbMagic         = 0xED0CDAED
	bbVersion       = 2
	bbHeaderSize    = 16
	bbElementSize   = 16 // a branch element (pos, ksize, pgid) and a leaf element (flags, pos, ksize, vsize)
	bbBucketHeader  = 16 // root pgid, sequence
	bbBranchFlag    = 0x01
	bbLeafFlag      = 0x02
	bbFreelistFlag  = 0x10
	bbBucketElement = 0x01 // leaf element flag: the value is a bucket
	bbNoFreelist    = ^uint64(0)
	bbMetaSize      = 64 // magic .. checksum
	bbMinPageSize   = 1 << 10
	bbMaxPageSize   = 1 << 24 // the largest page size bbolt looks for
)

// bbMeta is a decoded meta page.
type bbMeta struct {
	magic, version, pageSize uint32
	root, freelist, pgid     uint64
	txid, checksum, sum      uint64
}

func parseMeta(page []byte) (bbMeta, bool) {
	if len(page) < bbHeaderSize+bbMetaSize {
		return bbMeta{}, false
	}
	m := page[bbHeaderSize:]
	h := fnv.New64a()
	_, _ = h.Write(m[:56])
	return bbMeta{
		magic:    binary.LittleEndian.Uint32(m[0:]),
		version:  binary.LittleEndian.Uint32(m[4:]),
		pageSize: binary.LittleEndian.Uint32(m[8:]),
		root:     binary.LittleEndian.Uint64(m[16:]),
		freelist: binary.LittleEndian.Uint64(m[32:]),
		pgid:     binary.LittleEndian.Uint64(m[40:]),
		txid:     binary.LittleEndian.Uint64(m[48:]),
		checksum: binary.LittleEndian.Uint64(m[56:]),
		sum:      h.Sum64(),
	}, true
}

// problem is what bbolt's own validation of the meta page would say, or "".
func (m bbMeta) problem() string {
	switch {
	case m.magic != bbMagic:
		return fmt.Sprintf("bad magic %#x", m.magic)
	case m.version != bbVersion:
		return fmt.Sprintf("format version %d, want %d", m.version, bbVersion)
	case m.checksum != m.sum:
		return "bad checksum"
	}
	return ""
}

// VerifyFile checks the structure of the bbolt file at path by reading it
// (never mapping it), so that the damage a disk, a torn copy or a stray
// write can do is an error wrapping ErrCorrupt instead of what bbolt does
// when it maps such a file: a panic in a goroutine of its own, or a
// SIGSEGV or SIGBUS, none of which a caller can recover from. It checks
// what bbolt trusts when it opens a file and walks it: the meta pages
// (magic, version, checksum, page size; the one bbolt would pick), that the
// file holds every page the meta page counts, the freelist page when there
// is one, and every page reachable from the root bucket: id, type, that
// elements, keys and values lie inside the page, key order within a page
// and against the parent branch, inline buckets, and that no page is
// reachable twice or also free. It reads each page in use once. Values are
// not checked: bbolt keeps no checksum of them (Bolt.Check checks the
// store's records).
//
// A file of 0 bytes passes (bbolt makes it a new database). The file must
// not change while VerifyFile runs.
func VerifyFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return verify(f)
}

// verifyLocked is VerifyFile under a shared lock of the file, so that it
// does not read a file that a process holding bbolt's exclusive lock
// writes; it waits for the lock up to timeout. The lock is released before
// it returns, so that bbolt can take its own.
func verifyLocked(path string, timeout time.Duration) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			return berrors.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
	return verify(f)
}

func verify(f *os.File) (err error) {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%w: a directory, not a file", ErrCorrupt)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file (%s)", ErrCorrupt, st.Mode().Type())
	}
	if st.Size() == 0 {
		return nil
	}
	// The walk indexes only slices it has checked; this turns a mistake of
	// its own into an error too.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: verify: %v", ErrCorrupt, r)
		}
	}()
	v := &verifier{r: f, size: st.Size()}
	if err := v.run(); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}

// verifier walks one file.
type verifier struct {
	r     io.ReaderAt
	size  int64
	ps    int64
	hwm   uint64
	seen  []uint64 // bitset of the pages reached or free
	freed []uint64 // bitset of the freelist's pages
	buf   []byte   // the page being checked (pages without overflow)
}

func bitGet(b []uint64, i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func bitSet(b []uint64, i uint64)      { b[i/64] |= 1 << (i % 64) }

// readAt reads n bytes at off; short is an error.
func (v *verifier) readAt(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > v.size {
		return nil, fmt.Errorf("read of %d bytes at %d past the end of the file (%d bytes)", n, off, v.size)
	}
	b := make([]byte, n)
	if _, err := v.r.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// pageSize finds the page size as bbolt does: from the first meta page,
// else from the second, looked for at each possible page size.
func (v *verifier) pageSize() (int64, error) {
	var problems []string
	if b, err := v.readAt(0, min(v.size, 4096)); err == nil {
		if m, ok := parseMeta(b); !ok {
			problems = append(problems, "meta page 0: cut short")
		} else if p := m.problem(); p != "" {
			problems = append(problems, "meta page 0: "+p)
		} else {
			return int64(m.pageSize), nil
		}
	}
	for i := range 15 {
		pos := int64(1024) << i
		if pos >= v.size-1024 {
			break
		}
		b, err := v.readAt(pos, min(4096, v.size-pos))
		if err != nil {
			return 0, err
		}
		if m, ok := parseMeta(b); ok && m.problem() == "" {
			if int64(m.pageSize) != pos {
				return 0, fmt.Errorf("meta page 1 at offset %d says the page size is %d", pos, m.pageSize)
			}
			return pos, nil
		}
	}
	if v.size < 2*bbMinPageSize {
		problems = append(problems, fmt.Sprintf("the file is %d bytes, too short for two meta pages", v.size))
	} else {
		problems = append(problems, "no valid meta page 1")
	}
	return 0, fmt.Errorf("not a bbolt database, or both meta pages are damaged: %s", joinProblems(problems))
}

func joinProblems(p []string) string {
	var b bytes.Buffer
	for i, s := range p {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s)
	}
	return b.String()
}

func (v *verifier) run() error {
	ps, err := v.pageSize()
	if err != nil {
		return err
	}
	if ps < bbMinPageSize || ps > bbMaxPageSize || ps&(ps-1) != 0 {
		return fmt.Errorf("page size %d in the meta page is not a power of two in [%d, %d]", ps, bbMinPageSize, bbMaxPageSize)
	}
	v.ps = ps
	if v.size < 2*ps {
		return fmt.Errorf("the file is %d bytes, shorter than the two meta pages of %d bytes each (truncated?)", v.size, ps)
	}
	var metas [2]bbMeta
	var problems [2]string
	for i := range 2 {
		b, err := v.readAt(int64(i)*ps, bbHeaderSize+bbMetaSize)
		if err != nil {
			return err
		}
		metas[i], _ = parseMeta(b)
		problems[i] = metas[i].problem()
	}
	// bbolt uses the meta page of the later transaction, else the other.
	a, b := 0, 1
	if metas[1].txid > metas[0].txid {
		a, b = 1, 0
	}
	pick := a
	if problems[a] != "" {
		if problems[b] != "" {
			return fmt.Errorf("both meta pages are damaged: meta page 0: %s; meta page 1: %s", problems[0], problems[1])
		}
		pick = b
	}
	m := metas[pick]
	if int64(m.pageSize) != ps {
		return fmt.Errorf("meta page %d says the page size is %d, meta page %d %d", pick, m.pageSize, 1-pick, ps)
	}
	v.hwm = m.pgid
	if v.hwm < 3 || v.hwm > uint64(v.size/ps) {
		return fmt.Errorf("meta page %d (transaction %d) counts %d pages of %d bytes, the file is %d bytes (truncated?)", pick, m.txid, m.pgid, ps, v.size)
	}
	if m.root < 2 || m.root >= v.hwm {
		return fmt.Errorf("meta page %d: root bucket at page %d, outside [2, %d)", pick, m.root, v.hwm)
	}
	words := (v.hwm + 63) / 64
	v.seen, v.freed = make([]uint64, words), make([]uint64, words)
	bitSet(v.seen, 0)
	bitSet(v.seen, 1)
	if m.freelist != bbNoFreelist {
		if err := v.freelist(m.freelist); err != nil {
			return err
		}
	}
	return v.walk(m.root)
}

// page reads page id with its overflow pages and checks its header. The
// bytes are valid until the next call.
func (v *verifier) page(id uint64, parent uint64) ([]byte, uint16, error) {
	if id < 2 || id >= v.hwm {
		return nil, 0, fmt.Errorf("page %d (referenced by page %d) is outside [2, %d)", id, parent, v.hwm)
	}
	if int64(len(v.buf)) != v.ps {
		v.buf = make([]byte, v.ps)
	}
	b := v.buf
	if _, err := v.r.ReadAt(b, int64(id)*v.ps); err != nil {
		return nil, 0, err
	}
	hid := binary.LittleEndian.Uint64(b[0:])
	flags := binary.LittleEndian.Uint16(b[8:])
	overflow := uint64(binary.LittleEndian.Uint32(b[12:]))
	if hid != id {
		return nil, 0, fmt.Errorf("page %d (referenced by page %d) says it is page %d", id, parent, hid)
	}
	if id+overflow >= v.hwm {
		return nil, 0, fmt.Errorf("page %d: %d overflow pages run past the last page %d", id, overflow, v.hwm-1)
	}
	for i := id; i <= id+overflow; i++ {
		if bitGet(v.seen, i) {
			if bitGet(v.freed, i) {
				return nil, 0, fmt.Errorf("page %d (referenced by page %d) is also in the freelist", i, parent)
			}
			return nil, 0, fmt.Errorf("page %d (referenced by page %d) is reachable twice", i, parent)
		}
		bitSet(v.seen, i)
	}
	if overflow > 0 {
		var err error
		if b, err = v.readAt(int64(id)*v.ps, int64(overflow+1)*v.ps); err != nil {
			return nil, 0, err
		}
	}
	return b, flags, nil
}

// freelist checks the freelist page and marks its pages.
func (v *verifier) freelist(id uint64) error {
	if id < 2 || id >= v.hwm {
		return fmt.Errorf("freelist at page %d, outside [2, %d)", id, v.hwm)
	}
	b, flags, err := v.page(id, 0)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags != bbFreelistFlag {
		return fmt.Errorf("freelist page %d has type %#x", id, flags)
	}
	idx, count := uint64(0), uint64(binary.LittleEndian.Uint16(b[10:]))
	if count == 0xffff {
		idx, count = 1, binary.LittleEndian.Uint64(b[bbHeaderSize:])
	}
	if count > uint64(len(b)) || bbHeaderSize+(idx+count)*8 > uint64(len(b)) {
		return fmt.Errorf("freelist page %d: %d entries do not fit its %d bytes", id, count, len(b))
	}
	for i := range count {
		p := binary.LittleEndian.Uint64(b[bbHeaderSize+(idx+i)*8:])
		if p < 2 || p >= v.hwm {
			return fmt.Errorf("freelist page %d: free page %d outside [2, %d)", id, p, v.hwm)
		}
		if bitGet(v.seen, p) {
			return fmt.Errorf("freelist page %d: page %d is free twice, or is the freelist", id, p)
		}
		bitSet(v.seen, p)
		bitSet(v.freed, p)
	}
	return nil
}

// walkItem is a page to visit with the keys its subtree must lie in:
// [lo, hi), nil for no bound.
type walkItem struct {
	id, parent uint64
	lo, hi     []byte
}

// walk visits every page reachable from the root bucket's root page.
func (v *verifier) walk(root uint64) error {
	stack := []walkItem{{id: root}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		b, flags, err := v.page(it.id, it.parent)
		if err != nil {
			return err
		}
		switch flags {
		case bbBranchFlag:
			stack, err = v.branch(it, b, stack)
		case bbLeafFlag:
			stack, err = v.leaf(it.id, b, it.lo, it.hi, stack, 0)
		default:
			err = fmt.Errorf("page %d (referenced by page %d) has type %#x, want a branch or leaf page", it.id, it.parent, flags)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// elements checks that count elements fit in the page b.
func elements(id uint64, b []byte) (int, error) {
	n := int(binary.LittleEndian.Uint16(b[10:]))
	if bbHeaderSize+n*bbElementSize > len(b) {
		return 0, fmt.Errorf("%d elements do not fit its %d bytes", n, len(b))
	}
	return n, nil
}

// span is b[off+pos : off+pos+n], if it lies inside b.
func span(b []byte, off int, pos, n uint64) ([]byte, bool) {
	start := uint64(off) + pos
	if pos > uint64(len(b)) || n > uint64(len(b)) || start+n > uint64(len(b)) {
		return nil, false
	}
	return b[start : start+n], true
}

// inRange checks key order: key after prev (strictly), in [lo, hi).
func inRange(key, prev, lo, hi []byte, first bool) bool {
	if !first && bytes.Compare(prev, key) >= 0 {
		return false
	}
	if lo != nil && bytes.Compare(key, lo) < 0 {
		return false
	}
	return hi == nil || bytes.Compare(key, hi) < 0
}

func (v *verifier) branch(it walkItem, b []byte, stack []walkItem) ([]walkItem, error) {
	n, err := elements(it.id, b)
	if err != nil {
		return stack, fmt.Errorf("branch page %d: %w", it.id, err)
	}
	if n == 0 {
		return stack, fmt.Errorf("branch page %d has no elements", it.id)
	}
	// bbolt writes the keys one after the other, after the elements.
	start := uint64(bbHeaderSize + n*bbElementSize)
	next := start
	kids := make([]uint64, n)
	var prev []byte
	for i := range n {
		off := bbHeaderSize + i*bbElementSize
		pos := uint64(binary.LittleEndian.Uint32(b[off:]))
		ksize := uint64(binary.LittleEndian.Uint32(b[off+4:]))
		kids[i] = binary.LittleEndian.Uint64(b[off+8:])
		k, ok := span(b, off, pos, ksize)
		if !ok {
			return stack, fmt.Errorf("branch page %d: key %d lies outside the page", it.id, i)
		}
		if uint64(off)+pos != next {
			return stack, fmt.Errorf("branch page %d: key %d is not where the previous one ends", it.id, i)
		}
		if !inRange(k, prev, it.lo, it.hi, i == 0) {
			return stack, fmt.Errorf("branch page %d: key %d is out of order", it.id, i)
		}
		next += ksize
		prev = k
	}
	// The children's bounds outlive b: the keys are copied, in one block.
	block := append([]byte(nil), b[start:next]...)
	keys := make([][]byte, n)
	at := uint64(0)
	for i := range n {
		ksize := uint64(binary.LittleEndian.Uint32(b[bbHeaderSize+i*bbElementSize+4:]))
		keys[i] = block[at : at+ksize : at+ksize]
		at += ksize
	}
	for i := n - 1; i >= 0; i-- {
		hi := it.hi
		if i < n-1 {
			hi = keys[i+1]
		}
		stack = append(stack, walkItem{id: kids[i], parent: it.id, lo: keys[i], hi: hi})
	}
	return stack, nil
}

// leaf checks a leaf page (b, or an inline bucket's page, depth > 0) and
// queues the root pages of the buckets it holds.
func (v *verifier) leaf(id uint64, b []byte, lo, hi []byte, stack []walkItem, depth int) ([]walkItem, error) {
	where := fmt.Sprintf("leaf page %d", id)
	if depth > 0 {
		where = fmt.Sprintf("an inline bucket of leaf page %d", id)
	}
	n, err := elements(id, b)
	if err != nil {
		return stack, fmt.Errorf("%s: %w", where, err)
	}
	// bbolt writes each key and value after the previous ones, after the
	// elements.
	next := uint64(bbHeaderSize + n*bbElementSize)
	var prev []byte
	for i := range n {
		off := bbHeaderSize + i*bbElementSize
		flags := binary.LittleEndian.Uint32(b[off:])
		pos := uint64(binary.LittleEndian.Uint32(b[off+4:]))
		ksize := uint64(binary.LittleEndian.Uint32(b[off+8:]))
		vsize := uint64(binary.LittleEndian.Uint32(b[off+12:]))
		kv, ok := span(b, off, pos, ksize+vsize)
		if !ok {
			return stack, fmt.Errorf("%s: element %d lies outside the page", where, i)
		}
		if uint64(off)+pos != next {
			return stack, fmt.Errorf("%s: element %d is not where the previous one ends", where, i)
		}
		next += ksize + vsize
		k, val := kv[:ksize], kv[ksize:]
		if !inRange(k, prev, lo, hi, i == 0) {
			return stack, fmt.Errorf("%s: key %d is out of order", where, i)
		}
		prev = k
		switch flags {
		case 0:
		case bbBucketElement:
			if len(val) < bbBucketHeader {
				return stack, fmt.Errorf("%s: bucket %d has a value of %d bytes", where, i, len(val))
			}
			if root := binary.LittleEndian.Uint64(val); root != 0 {
				stack = append(stack, walkItem{id: root, parent: id})
				continue
			}
			inline := val[bbBucketHeader:]
			if depth > 8 || len(inline) < bbHeaderSize || binary.LittleEndian.Uint16(inline[8:]) != bbLeafFlag {
				return stack, fmt.Errorf("%s: inline bucket %d is damaged", where, i)
			}
			if stack, err = v.leaf(id, inline, nil, nil, stack, depth+1); err != nil {
				return stack, err
			}
		default:
			return stack, fmt.Errorf("%s: element %d has flags %#x", where, i, flags)
		}
	}
	return stack, nil
}
