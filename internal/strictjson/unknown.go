package strictjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// UnknownField returns the path ("kinds[2].shares") of the first key of
// the JSON text data that the struct type t (its json tags, followed into
// struct, pointer and slice fields) has no field for, and the keys known
// where it is; "" when every key is known or data is not JSON.
// encoding/json's DisallowUnknownFields names the key alone, which does
// not say where it is: "unknown field \"name\"" of an agent reads as
// wrong when the file's top level has a name.
func UnknownField(data []byte, t reflect.Type) (string, []string) {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return "", nil
	}
	return unknownIn(v, t, "")
}

func unknownIn(v any, t reflect.Type, at string) (string, []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case []any:
		if t.Kind() != reflect.Slice {
			return "", nil
		}
		for i, e := range x {
			if p, known := unknownIn(e, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p, known
			}
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", nil
		}
		fields := map[string]reflect.Type{}
		var known []string
		structFields(t, fields, &known)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := k
			if at != "" {
				path = at + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				// encoding/json matches keys case-insensitively too.
				for name, f := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = f, true
					}
				}
			}
			if !ok {
				return path, known
			}
			if p, kn := unknownIn(x[k], ft, path); p != "" {
				return p, kn
			}
		}
	}
	return "", nil
}

// structFields collects the JSON names of t's fields as encoding/json
// sees them: the json tag's name, else the Go name of an exported field;
// an untagged embedded struct's fields are the outer struct's.
func structFields(t reflect.Type, fields map[string]reflect.Type, known *[]string) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && !strings.HasPrefix(tag, "-,") {
			continue
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			structFields(ft, fields, known)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := fields[name]; !dup {
			fields[name] = sf.Type
			*known = append(*known, name)
		}
	}
}

// TypePath turns the dotted path of an encoding/json UnmarshalTypeError
// ("kinds.share", which names no element) into the path of the first value
// there of the JSON kind it reports ("kinds[2].share" for value "string":
// string, number, bool, array, object or null); "" when none is found.
func TypePath(data []byte, dotted, kind string) string {
	var v any
	if json.Unmarshal(data, &v) != nil || dotted == "" {
		return ""
	}
	return typeIn(v, strings.Split(dotted, "."), kind, "")
}

func typeIn(v any, keys []string, kind, at string) string {
	if len(keys) == 0 && (jsonKind(v) == kind || strings.HasPrefix(kind, "number") && jsonKind(v) == "number") {
		return at
	}
	if arr, ok := v.([]any); ok {
		for i, e := range arr {
			if p := typeIn(e, keys, kind, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if len(keys) == 0 {
		return ""
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	next, ok := obj[keys[0]]
	if !ok {
		for k, x := range obj { // encoding/json matches keys case-insensitively
			if strings.EqualFold(k, keys[0]) {
				next, ok = x, true
				break
			}
		}
	}
	if !ok {
		return ""
	}
	path := keys[0]
	if at != "" {
		path = at + "." + keys[0]
	}
	return typeIn(next, keys[1:], kind, path)
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
