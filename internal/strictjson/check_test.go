package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	structs := func(p string) bool { return p == "" || p == "app" }
	cases := []struct {
		name, body string
		path       string // "" with ok=true: no error expected
		ok         bool
		msg        string
	}{
		{name: "plain", body: `{"a":"b","c":[1,"x",{"d":null}]}`, ok: true},
		{name: "escapes and pairs", body: `{"a":"\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"}`, ok: true},
		{name: "raw utf-8", body: `{"name":"ジョブ ✓ données 😀"}`, ok: true},
		{name: "same key in sibling objects", body: `{"a":{"k":1},"b":{"k":2}}`, ok: true},
		{name: "case variants in a map", body: `{"labels":{"a":"1","A":"2"}}`, ok: true},
		{name: "syntax error left to the decoder", body: `{"a":"b",}`, ok: true},
		{name: "truncated left to the decoder", body: `{"a":"\ud8`, ok: true},
		{name: "empty", body: ``, ok: true},

		{name: "invalid utf-8 value", body: "{\"app\":{\"args\":[\"ok\",\"a\xffb\"]}}", path: "app.args[1]", msg: "valid UTF-8"},
		{name: "utf-8 encoded surrogate", body: "{\"name\":\"\xed\xa0\x80\"}", path: "name", msg: "valid UTF-8"},
		{name: "overlong utf-8", body: "{\"name\":\"\xc0\xaf\"}", path: "name", msg: "valid UTF-8"},
		{name: "invalid utf-8 key", body: "{\"labels\":{\"k\xfe\":\"v\"}}", path: "labels", msg: "key that is not valid UTF-8"},
		{name: "lone high surrogate", body: `{"app":{"sparkConf":{"spark.x":"a\ud800b"}}}`, path: "app.sparkConf.spark.x", msg: "lone UTF-16 surrogate"},
		{name: "lone high at end", body: `{"name":"a\uD800"}`, path: "name", msg: `\uD800`},
		{name: "lone low surrogate", body: `{"name":"\udc00"}`, path: "name", msg: "lone UTF-16 surrogate"},
		{name: "high then non-low", body: `{"name":"\ud800\u0041"}`, path: "name", msg: "lone"},
		{name: "high then high", body: `{"name":"\ud800\ud800\udc00"}`, path: "name", msg: "lone"},
		{name: "surrogate in key", body: `{"labels":{"\udfff":"v"}}`, path: "labels", msg: "key that is not valid Unicode"},
		{name: "top-level string", body: `"\ud800"`, path: "", msg: "lone"},
		{name: "duplicate key", body: `{"executors":1,"executors":2}`, path: "executors", msg: "twice"},
		{name: "duplicate nested", body: `{"app":{"args":[],"mainClass":"a","mainClass":"b"}}`, path: "app.mainClass", msg: "twice"},
		{name: "duplicate in map", body: `{"labels":{"a":"1","a":"2"}}`, path: "labels.a", msg: "twice"},
		{name: "duplicate by escape", body: `{"labels":{"a":"1","\u0061":"2"}}`, path: "labels.a", msg: "twice"},
		{name: "duplicate in array element", body: `{"x":[{"k":1},{"k":1,"k":2}]}`, path: "x[1].k", msg: "twice"},
		{name: "case variant of a struct field", body: `{"executors":1,"Executors":2}`, path: "Executors", msg: "without regard to case"},
		{name: "kelvin sign folds to k", body: `{"app":{"k":1,"\u212a":2}}`, path: "app.\u212a", msg: "without regard to case"},
		{name: "too deep", body: strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), path: strings.Repeat("[0]", MaxDepth), msg: "nested deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Check([]byte(tc.body), structs)
			if tc.ok {
				if e != nil {
					t.Fatalf("Check = %v, want nil", e)
				}
				return
			}
			if e == nil {
				t.Fatalf("Check = nil, want an error at %q", tc.path)
			}
			if e.Path != tc.path || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("Check = {%q, %q}, want path %q and a message with %q", e.Path, e.Msg, tc.path, tc.msg)
			}
		})
	}
}

// keysRepeat reports whether some object of the (valid) JSON text has a
// key twice, by walking encoding/json's token stream: an independent way
// to find what Check must find.
func keysRepeat(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.obj && top.wantKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.obj {
				top.wantKey = true
			}
		default:
			if top != nil && top.obj {
				top.wantKey = true
			}
		}
	}
}

func TestKeysRepeatOracle(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":{"b":1,"b":2}}`:           true,
		`{"a":[{"b":1},{"b":1}],"c":1}`: false,
		`{"a":{"b":1},"a":2}`:           true,
		`[{"x":"a","y":"a"}]`:           false,
	} {
		if got := keysRepeat([]byte(body)); got != want {
			t.Errorf("keysRepeat(%s) = %v, want %v", body, got, want)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[{"x":[1,{"y":"\u00e9"}]}]`, `{"a":{"b":{"c":"\ud83d\ude00"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := Check(data, nil)
		if !json.Valid(data) || len(data) > 1<<16 {
			return
		}
		if e != nil && e.Msg == "" {
			t.Fatal("error without a message")
		}
		// Valid JSON outside strings is ASCII: invalid UTF-8 anywhere is
		// inside a string and must be found.
		if !utf8.Valid(data) && e == nil {
			t.Fatalf("invalid UTF-8 not reported in %q", data)
		}
		if keysRepeat(data) && e == nil {
			t.Fatalf("repeated key not reported in %q", data)
		}
		// Without escapes, invalid text or repeated keys there is nothing
		// to report (nesting aside).
		if e != nil && utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) && !keysRepeat(data) && !strings.Contains(e.Msg, "nested") {
			t.Fatalf("Check reported %v for %q", e, data)
		}
		// What Check accepts decodes to the same strings it was sent as.
		if e == nil {
			var v any
			if err := json.Unmarshal(data, &v); err != nil && !errors.Is(err, io.EOF) {
				return
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("\ufffd")) && !bytes.Contains(data, []byte("\ufffd")) && !bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`)) {
				t.Fatalf("accepted %q, which decodes with replacement characters: %s", data, b)
			}
		}
	})
}

// foldKeyRunes is foldKey without its ASCII shortcut: every rune to the
// smallest of its case-folding orbit.
func foldKeyRunes(k string) string {
	var b strings.Builder
	for _, r := range k {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

func TestFoldKeyASCIIShortcut(t *testing.T) {
	for a := 0; a < utf8.RuneSelf; a++ {
		for _, k := range []string{string(rune(a)), "x" + string(rune(a)) + "Y", "executorCores" + string(rune(a))} {
			if got, want := foldKey(k), foldKeyRunes(k); got != want {
				t.Fatalf("foldKey(%q) = %q, want %q", k, got, want)
			}
		}
	}
	for _, k := range []string{"\u212a", "ſ", "Straße", "mainClass", "MAINCLASS", ""} {
		if got, want := foldKey(k), foldKeyRunes(k); got != want {
			t.Errorf("foldKey(%q) = %q, want %q", k, got, want)
		}
	}
}
