package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
)

// Updates outside the commit loop.
//
// The store runs every write closure on its one commit goroutine, so work
// done in a closure delays every other write of the cluster. PUT and PATCH
// therefore work as kube-apiserver's GuaranteedUpdate does: read the
// stored object, compute the new version (apply the patch, decode,
// default, validate, encode) outside any transaction, then commit it in a
// transaction that first checks that the object is still at the revision
// read. If it is not, the update is computed again from a new read. Only
// the hook, the check and the write run in the commit loop.
//
// A request without metadata.resourceVersion never fails with Conflict:
// after optimisticTries stale reads (a hot object), the update is computed
// inside the transaction as before, where nothing can change under it. A
// request that sets resourceVersion gets 409 once a read shows a newer one.

// optimisticTries bounds the reads of one update computed outside the
// transaction.
const optimisticTries = 4

// MaxObjectBytes is the largest encoded object the API server stores, as
// etcd's default request limit (--max-request-bytes, 1.5 MiB) bounds what
// kube-apiserver can store. A bigger object gets 413 RequestEntityTooLarge.
const MaxObjectBytes = 3 << 19

// errStale aborts a transaction whose object changed since it was read.
var errStale = errors.New("apiserver: object changed since it was read")

// checkObjectSize refuses an encoded object over MaxObjectBytes.
func checkObjectSize(r *resource, name string, n int) error {
	if n <= MaxObjectBytes {
		return nil
	}
	return newStatusError(http.StatusRequestEntityTooLarge, api.StatusReasonRequestEntityTooLarge,
		fmt.Sprintf("%s %q is too large to store: %d bytes, the limit is %d bytes", r.qualified, name, n, MaxObjectBytes),
		&api.StatusDetails{Name: name, Group: r.info.Group, Kind: r.info.Resource})
}

// guaranteedUpdate updates the object the request names to the version
// next computes from the stored one (next must not modify kv.Value and may
// be called more than once), and returns the object as stored and next's
// last warnings.
func (h *handler) guaranteedUpdate(ctx context.Context, dryRun bool, next func(kv store.KeyValue) (api.Object, []string, error)) ([]byte, []string, error) {
	key := KeyFor(h.r.info, h.ns, h.name)
	for range optimisticTries {
		kv, err := h.s.store.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, NewNotFound(h.r.qualified, h.name)
		}
		if err != nil {
			return nil, nil, err
		}
		obj, warnings, err := next(kv)
		if err != nil {
			return nil, warnings, err
		}
		u, err := h.prepareUpdate(kv, obj, h.sub)
		if err != nil {
			return nil, warnings, err
		}
		var raw []byte
		err = h.s.write(ctx, dryRun, func(tx store.Txn, run *hookRun) error {
			cur, err := h.storedIn(tx)
			if err != nil {
				return err
			}
			if cur.ModRevision != kv.ModRevision {
				return errStale
			}
			raw, err = u.commit(ctx, h.s, tx, run)
			return err
		})
		if errors.Is(err, errStale) {
			continue
		}
		return raw, warnings, err
	}
	var (
		raw      []byte
		warnings []string
	)
	err := h.s.write(ctx, dryRun, func(tx store.Txn, run *hookRun) error {
		kv, err := h.storedIn(tx)
		if err != nil {
			return err
		}
		var obj api.Object
		obj, warnings, err = next(kv)
		if err != nil {
			return err
		}
		raw, err = h.applyUpdate(ctx, tx, run, kv, obj, h.sub)
		return err
	})
	return raw, warnings, err
}

// pendingUpdate is a new version of a stored object, checked (and, when
// the hook cannot change it, encoded) before its transaction.
type pendingUpdate struct {
	r        *resource
	sub      string
	key      string
	kv       store.KeyValue // the stored version it was computed from
	old, obj api.Object
	del      bool // the update removes the object (last finalizer gone)
	// enc is obj's encoding at any revision, nil when the hook may still
	// change obj; noop says it is kv.Value at kv.ModRevision.
	enc  *splitEncoding
	noop bool
}

// applyUpdate turns a new version of a stored object (kv) into the next
// stored value, inside tx: see prepareUpdate and commit. It returns the
// object as sent back.
func (h *handler) applyUpdate(ctx context.Context, tx store.Txn, run *hookRun, kv store.KeyValue, newObj api.Object, sub string) ([]byte, error) {
	u, err := h.prepareUpdate(kv, newObj, sub)
	if err != nil {
		return nil, err
	}
	return u.commit(ctx, h.s, tx, run)
}

// prepareUpdate does what needs no transaction of the update of a stored
// object (kv) to newObj: resourceVersion precondition, server-owned
// metadata, status rules per subresource, generation, defaulting and
// validation, deletion when the last finalizer goes, and the encoding.
func (h *handler) prepareUpdate(kv store.KeyValue, newObj api.Object, sub string) (*pendingUpdate, error) {
	r := h.r
	old, err := r.decode(kv.Value)
	if err != nil {
		return nil, err
	}
	nm, om := newObj.GetObjectMeta(), old.GetObjectMeta()
	if nm.ResourceVersion != "" && nm.ResourceVersion != om.ResourceVersion {
		return nil, NewConflict(r.qualified, om.Name, errModified)
	}
	obj := newObj
	switch sub {
	case "status":
		base, err := r.decode(kv.Value)
		if err != nil {
			return nil, err
		}
		r.copyStatus(base, newObj)
		obj = base
	case "":
		if nm.UID != "" && nm.UID != om.UID {
			return nil, NewInvalid(r.qualifiedKind, om.Name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "uid"), nm.UID, "field is immutable")})
		}
		nm.UID = om.UID
		nm.CreationTimestamp = om.CreationTimestamp
		nm.DeletionTimestamp = om.DeletionTimestamp
		nm.DeletionGracePeriodSeconds = om.DeletionGracePeriodSeconds
		nm.GenerateName = om.GenerateName
		nm.ManagedFields = nil
		if r.subs["status"] {
			r.copyStatus(newObj, old)
		}
		// The resource's own update strategy (a Service keeps its
		// allocated clusterIP/nodePorts when the request omits them and
		// drops the ones a type change no longer needs), before defaulting
		// and validation as in Kubernetes.
		if r.info.PrepareForUpdate != nil {
			r.info.PrepareForUpdate(newObj, old)
		}
	}
	meta := obj.GetObjectMeta()
	validate := sub != "binding" && sub != "finalize"
	if validate && r.info.Default != nil {
		r.info.Default(obj)
	}
	if om.DeletionTimestamp != nil {
		for _, f := range meta.Finalizers {
			if !slices.Contains(om.Finalizers, f) {
				return nil, NewInvalid(r.qualifiedKind, om.Name, field.ErrorList{field.Forbidden(
					field.NewPath("metadata", "finalizers"), "no new finalizers can be added if the object is being deleted")})
			}
		}
	}
	meta.Generation = om.Generation
	if changed, err := r.specChanged(old, obj); err != nil {
		return nil, err
	} else if changed {
		meta.Generation++
	}
	if validate {
		errs := validateMeta(r, meta)
		switch {
		case sub == "status" && r.info.ValidateStatusUpdate != nil:
			errs = append(errs, r.info.ValidateStatusUpdate(obj, old)...)
		case r.info.ValidateUpdate != nil:
			errs = append(errs, r.info.ValidateUpdate(obj, old)...)
		}
		if len(errs) > 0 {
			return nil, NewInvalid(r.qualifiedKind, om.Name, errs)
		}
	}
	del, err := r.shouldDelete(obj)
	if err != nil {
		return nil, err
	}
	u := &pendingUpdate{r: r, sub: sub, key: KeyFor(r.info, om.Namespace, om.Name), kv: kv, old: old, obj: obj, del: del}
	if r.hookMayMutate() {
		return u, nil
	}
	if u.enc, err = r.encodeSplit(obj); err != nil || u.enc == nil {
		return u, err
	}
	if !del {
		cur := u.enc.at(kv.ModRevision)
		u.noop = bytes.Equal(cur, kv.Value)
		if !u.noop {
			if err := checkObjectSize(r, om.Name, len(cur)); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

// commit does the update's part inside tx: the hook, then the delete or
// the write (none when nothing changed). It returns the object as sent
// back.
func (u *pendingUpdate) commit(ctx context.Context, s *Server, tx store.Txn, run *hookRun) ([]byte, error) {
	r := u.r
	if u.del {
		if err := s.admit(ctx, tx, run, r, Admission{Op: OpDelete, Obj: u.obj, Subresource: u.sub}); err != nil {
			return nil, err
		}
		if err := tx.Delete(u.key); err != nil {
			return nil, err
		}
		if u.enc != nil {
			return u.enc.at(tx.Revision()), nil
		}
		return r.encode(u.obj, tx.Revision())
	}
	if err := s.admit(ctx, tx, run, r, Admission{Op: OpUpdate, Obj: u.obj, Old: u.old, Subresource: u.sub}); err != nil {
		return nil, err
	}
	var raw []byte
	if u.enc != nil {
		if u.noop {
			return u.kv.Value, nil // no-op: no new revision, no event
		}
		raw = u.enc.at(tx.Revision())
	} else {
		cur, err := r.encode(u.obj, u.kv.ModRevision)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(cur, u.kv.Value) {
			return u.kv.Value, nil
		}
		if raw, err = r.encode(u.obj, tx.Revision()); err != nil {
			return nil, err
		}
	}
	if err := checkObjectSize(r, u.obj.GetObjectMeta().Name, len(raw)); err != nil {
		return nil, err
	}
	return raw, tx.Put(u.key, raw)
}

// hookMayMutate reports whether the resource's hook may change the object
// it admits, so that the object can be encoded only after it.
func (r *resource) hookMayMutate() bool {
	if r.hook == nil {
		return false
	}
	_, ok := r.hook.(ValidatingHook)
	return !ok
}

// splitEncoding is an object's JSON cut around its resourceVersion: the
// encoding at a revision is head, the revision, tail.
type splitEncoding struct {
	head, tail []byte
}

// at is the encoding with resourceVersion rev.
func (e *splitEncoding) at(rev int64) []byte {
	out := make([]byte, 0, len(e.head)+20+len(e.tail))
	out = append(out, e.head...)
	out = strconv.AppendInt(out, rev, 10)
	return append(out, e.tail...)
}

// encodeSplit stamps TypeMeta, encodes obj once with a random placeholder
// resourceVersion and cuts the JSON around it, so that the encoding at the
// transaction's revision costs a copy. It returns nil (and the caller
// encodes at commit) in the unlikely case that the placeholder occurs
// elsewhere in the object. obj's resourceVersion is left as it was.
func (r *resource) encodeSplit(obj api.Object) (*splitEncoding, error) {
	tm := obj.GetTypeMeta()
	tm.APIVersion, tm.Kind = r.storedAPIVersion(), r.info.Kind
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	token := newUID() // [0-9a-f-]: JSON needs no escape
	meta.ResourceVersion = token
	b, err := json.Marshal(obj)
	meta.ResourceVersion = rv
	if err != nil {
		return nil, fmt.Errorf("apiserver: encoding %s: %w", r.qualified, err)
	}
	i := bytes.Index(b, []byte(token))
	if i < 0 || bytes.Contains(b[i+len(token):], []byte(token)) {
		return nil, nil
	}
	return &splitEncoding{head: b[:i], tail: b[i+len(token):]}, nil
}
