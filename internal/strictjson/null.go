package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// NullMember returns where the JSON array or object v holds a null: the
// first such element as "[i]", or the first (in key order) such member's
// key; ok is false when it holds none, or v is neither (null, absent,
// malformed: left to the decoder). encoding/json decodes a null into a
// string slot as "" without a word, so ["a", null] became the arguments
// "a" and "" and {"team": null} a label team="": both front ends refuse
// such a body instead, naming the element.
func NullMember(v []byte) (where string, ok bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) != nil {
			return "", false
		}
		for i, e := range arr {
			if isNull(e) {
				return fmt.Sprintf("[%d]", i), true
			}
		}
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return "", false
		}
		keys := make([]string, 0, len(obj))
		for k, e := range obj {
			if isNull(e) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			return keys[0], true
		}
	}
	return "", false
}

func isNull(e json.RawMessage) bool { return string(bytes.TrimSpace(e)) == "null" }
