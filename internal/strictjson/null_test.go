package strictjson

import "testing"

func TestNullMember(t *testing.T) {
	for _, c := range []struct {
		v, where string
		ok       bool
	}{
		{`["a", null]`, "[1]", true},
		{`[null]`, "[0]", true},
		{` [ "a" , "" ] `, "", false},
		{`{"b": null, "a": null, "c": "x"}`, "a", true},
		{`{"team": "x"}`, "", false},
		{`{"x": "null"}`, "", false}, // the string "null" is a string
		{`null`, "", false},
		{``, "", false},
		{`[1, null`, "", false}, // malformed: the decoder says so
		{`"s"`, "", false},
	} {
		where, ok := NullMember([]byte(c.v))
		if where != c.where || ok != c.ok {
			t.Errorf("NullMember(%s) = %q, %v; want %q, %v", c.v, where, ok, c.where, c.ok)
		}
	}
}
