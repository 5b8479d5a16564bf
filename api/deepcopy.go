package api

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// DeepCopy returns a deep copy of obj of the same dynamic type, made by a
// JSON round trip into a new value (reflect.New of obj's element type), so
// it copies exactly what the API would: unexported fields and fields
// without a JSON form are not copied, and times keep the API's precision.
// T may be a concrete pointer type (*Pod) or api.Object itself; a nil obj
// (or a nil pointer) is returned as is.
//
// Every API type round-trips through JSON, so a failure here means obj's
// type is not an API type at all; DeepCopy then panics rather than return
// a half-copied object.
func DeepCopy[T Object](obj T) T {
	v := reflect.ValueOf(obj)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return obj
	}
	data, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("api: DeepCopy %T: %v", obj, err))
	}
	var out reflect.Value
	if v.Kind() == reflect.Pointer {
		out = reflect.New(v.Type().Elem())
		if err := json.Unmarshal(data, out.Interface()); err != nil {
			panic(fmt.Sprintf("api: DeepCopy %T: %v", obj, err))
		}
	} else {
		p := reflect.New(v.Type())
		if err := json.Unmarshal(data, p.Interface()); err != nil {
			panic(fmt.Sprintf("api: DeepCopy %T: %v", obj, err))
		}
		out = p.Elem()
	}
	return out.Interface().(T)
}
