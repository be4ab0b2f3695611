package strictjson

import (
	"reflect"
	"strings"
	"testing"
)

type unkInner struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

type unkEmbedded struct {
	Extra string `json:"extra"`
}

type unkItem struct {
	unkEmbedded
	ID    string            `json:"id"`
	Range *unkInner         `json:"range,omitempty"`
	Attrs map[string]string `json:"attrs"`
	Plain int
	Skip  int `json:"-"`
}

type unkTop struct {
	Name  string    `json:"name"`
	Items []unkItem `json:"items"`
}

// TestUnknownFieldByHand: the path of the first unknown key, in an array
// element, a nested pointer struct, at the top; embedded fields, untagged
// exported fields (case-insensitively, as encoding/json) and map keys are
// known; a "-" field is not; not JSON: "".
func TestUnknownFieldByHand(t *testing.T) {
	ty := reflect.TypeFor[unkTop]()
	for _, c := range []struct{ in, path, known string }{
		{`{"name": "c", "items": [{"id": "a"}, {"id": "b", "name": "x"}]}`, "items[1].name", "extra, id, range, attrs, Plain"},
		{`{"items": [{"range": {"min": 1, "mean": 2}}]}`, "items[0].range.mean", "min, max"},
		{`{"name": "c", "speed": 1}`, "speed", "name, items"},
		{`{"items": [{"extra": "e", "plain": 1, "attrs": {"any": "x"}, "ID": "a"}]}`, "", ""},
		{`{"items": [{"Skip": 1}]}`, "items[0].Skip", "extra, id, range, attrs, Plain"},
		{`{"items": [`, "", ""},
		{`[1, 2]`, "", ""},
	} {
		path, known := UnknownField([]byte(c.in), ty)
		if path != c.path || strings.Join(known, ", ") != c.known {
			t.Errorf("UnknownField(%s) = %q, %q; want %q, %q", c.in, path, known, c.path, c.known)
		}
	}
}

// TestTypePathByHand: encoding/json's dotted path of a type error, with
// the index of the element that holds the reported kind; a top-level
// value; a wrong element of an array field; no such value: "".
func TestTypePathByHand(t *testing.T) {
	data := `{"name": "c", "items": [{"id": "a", "n": 1}, {"id": 7, "n": [2]}], "tags": ["x", 3]}`
	for _, c := range []struct{ dotted, kind, want string }{
		{"items.id", "number", "items[1].id"},
		{"items.n", "array", "items[1].n"},
		{"name", "string", "name"},
		{"tags", "number 3", "tags[1]"},
		{"items.id", "bool", ""},
		{"nothing.here", "string", ""},
		{"", "string", ""},
	} {
		if got := TypePath([]byte(data), c.dotted, c.kind); got != c.want {
			t.Errorf("TypePath(%q, %q) = %q, want %q", c.dotted, c.kind, got, c.want)
		}
	}
}
