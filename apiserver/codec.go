package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/protobuf"
)

// Media types the server decodes.
const (
	mediaJSON           = "application/json"
	mediaYAML           = "application/yaml"
	mediaMergePatch     = "application/merge-patch+json"
	mediaJSONPatch      = "application/json-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaProtobuf       = protobuf.MediaType
)

// fieldValidation is how unknown and duplicate fields are treated.
type fieldValidation int

const (
	validationStrict fieldValidation = iota
	validationWarn
	validationIgnore
)

func parseFieldValidation(r *http.Request) (fieldValidation, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "", "Strict":
		return validationStrict, nil
	case "Warn":
		return validationWarn, nil
	case "Ignore":
		return validationIgnore, nil
	default:
		return 0, NewBadRequest(fmt.Sprintf("fieldValidation must be one of Ignore, Warn or Strict, not %q", v))
	}
}

// mediaType is the request's Content-Type without parameters; an absent
// one means JSON.
func mediaType(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	switch ct {
	case "", mediaJSON:
		return mediaJSON, nil
	}
	mt, _, err := parseMediaTypeFast(ct)
	if err != nil {
		return "", NewUnsupportedMediaType(ct, mediaJSON, mediaYAML, mediaProtobuf)
	}
	return mt, nil
}

// parseMediaTypeFast skips mime parsing for a bare media type.
func parseMediaTypeFast(ct string) (string, map[string]string, error) {
	if ct != "" && !strings.ContainsAny(ct, "; \t") {
		return strings.ToLower(ct), nil, nil
	}
	return mime.ParseMediaType(ct)
}

// bodyChunk is the most readBody allocates before the body's bytes
// arrive.
const bodyChunk = 4 << 10

// readBody reads the whole body, at most limit bytes. The buffer grows
// with what arrives, never by what Content-Length announces: a client
// that declares 3 MiB and sends 200 bytes costs a few KiB. Over limit is
// 413; a body that stalls past the body timeout (bodyDeadline) is 408.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, NewRequestEntityTooLarge(limit)
	}
	size := int64(bodyChunk)
	if cl := r.ContentLength; cl >= 0 && cl < size {
		size = cl + 1 // room to read the EOF without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, NewRequestEntityTooLarge(limit)
			}
			// Double, up to one byte past the limit.
			buf = slices.Grow(buf, int(min(int64(cap(buf)), limit+1-int64(len(buf)))))
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			var bte *bodyTimeoutError
			switch {
			case errors.As(err, &mbe):
				return nil, NewRequestEntityTooLarge(mbe.Limit)
			case errors.As(err, &bte):
				return nil, NewRequestTimeout(fmt.Sprintf("Timeout: the request body did not arrive within %v", bte.timeout))
			case errors.Is(err, os.ErrDeadlineExceeded):
				return nil, NewRequestTimeout("Timeout: the request body did not arrive in time")
			}
			return nil, NewBadRequest(fmt.Sprintf("error reading request body: %v", err))
		}
	}
	if int64(len(buf)) > limit {
		return nil, NewRequestEntityTooLarge(limit)
	}
	return buf, nil
}

// toJSON converts a body of media type mt to JSON. A protobuf body becomes
// the JSON of the same object (package protobuf), decoded strictly after.
func toJSON(mt string, body []byte, v fieldValidation) ([]byte, error) {
	switch mt {
	case mediaJSON:
		return body, nil
	case mediaYAML:
		var (
			j   []byte
			err error
		)
		if v == validationStrict {
			j, err = yaml.YAMLToJSONStrict(body)
		} else {
			j, err = yaml.YAMLToJSON(body)
		}
		if err != nil {
			return nil, NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
		return j, nil
	case mediaProtobuf:
		j, err := protobuf.ToJSON(body, v == validationStrict)
		switch {
		case errors.Is(err, protobuf.ErrUnsupportedKind):
			return nil, NewUnsupportedMediaType(mt, mediaJSON, mediaYAML)
		case errors.Is(err, protobuf.ErrUnknownField):
			return nil, NewBadRequest("strict decoding error: " + err.Error())
		case err != nil:
			return nil, NewBadRequest(fmt.Sprintf("error decoding protobuf: %v", err))
		}
		return j, nil
	default:
		return nil, NewUnsupportedMediaType(mt, mediaJSON, mediaYAML, mediaProtobuf)
	}
}

// decodeObject decodes a request body of media type mt into a new object of
// info's type. Unknown and duplicate fields are errors (Strict), warnings
// (Warn) or ignored. apiVersion and kind, when present, must be info's; they
// are filled when absent. It never panics on any input.
func decodeObject(info *api.ResourceInfo, mt string, body []byte, v fieldValidation) (api.Object, []string, error) {
	data, err := toJSON(mt, body, v)
	if err != nil {
		return nil, nil, err
	}
	return decodeJSON(info, data, v)
}

func decodeJSON(info *api.ResourceInfo, data []byte, v fieldValidation) (api.Object, []string, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, nil, NewBadRequest("the body of the request must be a JSON object")
	}
	if info.Conversion != nil {
		return decodeConverted(info, trimmed, v)
	}
	obj := info.New()
	strictErrs, err := sigsjson.UnmarshalStrict(trimmed, obj)
	if err != nil {
		return nil, nil, NewBadRequest(fmt.Sprintf("error decoding %s: %v", info.Kind, err))
	}
	warnings, err := strictResult(strictErrs, v)
	if err != nil {
		return nil, nil, err
	}
	if err := checkTypeMeta(info, obj.GetTypeMeta()); err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// decodeConverted decodes a body of a resource served by conversion
// (api.ResourceInfo.Conversion): strictly into the served version's type,
// then converted to the stored one.
func decodeConverted(info *api.ResourceInfo, data []byte, v fieldValidation) (api.Object, []string, error) {
	served := info.Conversion.New()
	strictErrs, err := sigsjson.UnmarshalStrict(data, served)
	if err != nil {
		return nil, nil, NewBadRequest(fmt.Sprintf("error decoding %s: %v", info.Kind, err))
	}
	warnings, err := strictResult(strictErrs, v)
	if err != nil {
		return nil, nil, err
	}
	if tm, ok := served.(interface{ GetTypeMeta() *api.TypeMeta }); ok {
		if err := checkTypeMeta(info, tm.GetTypeMeta()); err != nil {
			return nil, nil, err
		}
	}
	obj, err := info.Conversion.ToStorage(served)
	if err != nil {
		return nil, nil, NewBadRequest(fmt.Sprintf("converting %s %s: %v", info.GroupVersion(), info.Kind, err))
	}
	return obj, warnings, nil
}

// strictResult turns strict decoding's errors into the answer fieldValidation v asks for.
func strictResult(strictErrs []error, v fieldValidation) ([]string, error) {
	if len(strictErrs) == 0 {
		return nil, nil
	}
	msgs := make([]string, len(strictErrs))
	for i, e := range strictErrs {
		msgs[i] = e.Error()
	}
	switch v {
	case validationStrict:
		return nil, NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
	case validationWarn:
		return msgs, nil
	}
	return nil, nil
}

// checkTypeMeta refuses a body of another apiVersion or kind and fills them in.
func checkTypeMeta(info *api.ResourceInfo, tm *api.TypeMeta) error {
	if tm.APIVersion != "" && tm.APIVersion != info.GroupVersion() {
		return NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, info.GroupVersion()))
	}
	if tm.Kind != "" && tm.Kind != info.Kind {
		return NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", tm.Kind, info.Kind))
	}
	tm.APIVersion, tm.Kind = info.GroupVersion(), info.Kind
	return nil
}

// decodeInto decodes body (JSON or YAML) strictly into a fixed type such as
// Scale or Binding.
func decodeInto(mt string, body []byte, v fieldValidation, into any) ([]string, error) {
	data, err := toJSON(mt, body, v)
	if err != nil {
		return nil, err
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, into)
	if err != nil {
		return nil, NewBadRequest(fmt.Sprintf("error decoding body: %v", err))
	}
	var warnings []string
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		switch v {
		case validationStrict:
			return nil, NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
		case validationWarn:
			warnings = msgs
		}
	}
	return warnings, nil
}

// defaultPatcher applies merge and JSON patches; strategic merge patches
// are applied as merge patches (lists are replaced, not merged).
func defaultPatcher(ctx context.Context, contentType string, original, patch []byte) ([]byte, error) {
	switch contentType {
	case mediaMergePatch, mediaStrategicPatch:
		out, err := jsonpatch.MergePatch(original, patch)
		if err != nil {
			return nil, NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
		}
		return out, nil
	case mediaJSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, NewBadRequest(fmt.Sprintf("error decoding JSON patch: %v", err))
		}
		out, err := p.Apply(original)
		if err != nil {
			return nil, newStatusError(http.StatusUnprocessableEntity, api.StatusReasonInvalid,
				fmt.Sprintf("the server rejected our request due to an error in our request: %v", err), nil)
		}
		return out, nil
	default:
		return nil, NewUnsupportedMediaType(contentType, mediaJSONPatch, mediaMergePatch, mediaStrategicPatch)
	}
}

// readRequest checks a write request's fieldValidation and media type and
// reads its body (within the size limit).
func (h *handler) readRequest() (fieldValidation, string, []byte, error) {
	return h.readRequestAs(mediaType)
}

// readRequestAs is readRequest with the content type read by contentType
// (patchType for a PATCH), checked before the body is read.
func (h *handler) readRequestAs(contentType func(*http.Request) (string, error)) (fieldValidation, string, []byte, error) {
	fv, err := parseFieldValidation(h.req)
	if err != nil {
		return fv, "", nil, err
	}
	ct, err := contentType(h.req)
	if err != nil {
		return fv, "", nil, err
	}
	body, err := readBody(h.req, h.s.maxBody)
	return fv, ct, body, err
}

// readObject reads and strictly decodes the request's object, sends any
// field-validation warnings, and checks its apiVersion, kind, name and
// namespace against the path (fillName: an empty body name takes the
// path's).
func (h *handler) readObject(fillName bool) (api.Object, error) {
	fv, mt, body, err := h.readRequest()
	if err != nil {
		return nil, err
	}
	obj, warnings, err := decodeObject(h.r.info, mt, body, fv)
	if err != nil {
		return nil, err
	}
	addWarnings(h.w, warnings)
	if err := h.checkBodyMeta(obj, fillName); err != nil {
		return nil, err
	}
	return obj, nil
}
