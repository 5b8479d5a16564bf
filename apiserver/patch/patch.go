package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Type is a patch format, named by its media type.
type Type string

// The patch types a PATCH request may carry in its Content-Type.
const (
	// MergePatch is a JSON merge patch (RFC 7386): objects merge key by key,
	// null deletes a key, every other value (lists included) replaces.
	MergePatch Type = "application/merge-patch+json"
	// JSONPatch is a JSON patch (RFC 6902): a list of add, remove, replace,
	// move, copy and test operations on JSON pointers.
	JSONPatch Type = "application/json-patch+json"
	// StrategicMergePatch is a Kubernetes strategic merge patch: a merge
	// patch whose lists with a merge key merge element by element (see
	// the package documentation and mergeKeys).
	StrategicMergePatch Type = "application/strategic-merge-patch+json"
)

// maxJSONPatchOperations bounds the operations of one JSON patch, as the
// Kubernetes API server does.
const maxJSONPatchOperations = 10000

// maxCopyBytes bounds how much a JSON patch's copy operations may grow the
// document (three times the 3 MiB request limit).
const maxCopyBytes = 3 * 3 << 20

// ParseContentType returns the patch type a Content-Type header names. It
// ignores parameters (`; charset=utf-8`) and case, and reports false for
// anything else, including application/apply-patch+yaml (server-side apply),
// which Skiff does not implement.
func ParseContentType(ct string) (Type, bool) {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", false
	}
	switch t := Type(strings.ToLower(mt)); t {
	case MergePatch, JSONPatch, StrategicMergePatch:
		return t, true
	}
	return "", false
}

// Apply applies patch, of the given type, to the JSON object original and
// returns the patched object as JSON. It never modifies its arguments.
//
// Every error wraps one of the package's sentinels (ErrInvalidPatch,
// ErrTestFailed, ErrCannotApply, ErrInvalidDocument, ErrUnsupportedType);
// StatusCode maps them to HTTP statuses.
func Apply(patchType Type, original, patch []byte) ([]byte, error) {
	doc, err := decodeJSON(original)
	if err != nil {
		return nil, fmt.Errorf("patch: %w: %v", ErrInvalidDocument, err)
	}
	docObj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("patch: %w: got %s", ErrInvalidDocument, kindOf(doc))
	}

	switch patchType {
	case JSONPatch:
		return applyJSONPatch(original, patch)
	case MergePatch, StrategicMergePatch:
	default:
		return nil, fmt.Errorf("patch: %w: %q", ErrUnsupportedType, string(patchType))
	}

	p, err := decodeJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w: %v", ErrInvalidPatch, err)
	}
	patchObj, ok := p.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("patch: %w: a %s must be a JSON object, got %s", ErrInvalidPatch, patchType, kindOf(p))
	}

	var out map[string]any
	if patchType == MergePatch {
		out = mergeObject(docObj, patchObj)
	} else {
		out, err = strategicMerge(docObj, patchObj, mergeKeys)
		if err != nil {
			return nil, err
		}
	}
	return encodeJSON(out)
}

// applyJSONPatch applies an RFC 6902 patch with evanphx/json-patch.
func applyJSONPatch(original, patch []byte) ([]byte, error) {
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w: json patch: %v", ErrInvalidPatch, err)
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, fmt.Errorf("patch: %w: json patch has %d operations, at most %d are allowed",
			ErrInvalidPatch, len(ops), maxJSONPatchOperations)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.AccumulatedCopySizeLimit = maxCopyBytes
	opts.EscapeHTML = false
	out, err := ops.ApplyWithOptions(original, opts)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return nil, fmt.Errorf("patch: %w: %v", ErrTestFailed, err)
		}
		return nil, fmt.Errorf("patch: %w: %v", ErrCannotApply, err)
	}
	if t := bytes.TrimLeft(out, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("patch: %w: the patched document is not a JSON object", ErrCannotApply)
	}
	return out, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number
// so that integers beyond 2^53 survive a patch unchanged.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty body")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// encodeJSON encodes v compactly without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("patch: encode result: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// kindOf names the JSON kind of a decoded value, for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
