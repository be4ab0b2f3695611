package strictjson

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays Check accepts.
// Neither front end needs more than four levels.
const MaxDepth = 64

// Error is a problem Check found, at the path of a value or a key.
type Error struct {
	// Path is the dotted path of the field, as the job contract names it
	// ("app.args[2]", "labels.team", "app.sparkConf.spark.foo"); "" is
	// the top level.
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Check scans the JSON text data and returns the first string (key or
// value) that is not valid UTF-8 or that holds an escaped lone surrogate,
// the first key that appears twice in one object, or a nesting deeper than
// MaxDepth. Keys of an object at a path for which fold returns true are
// compared as encoding/json matches struct fields, without regard to case
// (so {"executors":1,"Executors":2} is a duplicate there); fold may be nil.
//
// Check does not judge syntax: at the first syntax error it stops and
// returns nil, leaving the error to the decoder.
func Check(data []byte, fold func(path string) bool) *Error {
	s := &scanner{data: data, fold: fold}
	e, _ := s.value("", 0)
	return e
}

// CheckFields is Check for a body whose objects at some paths decode into
// structs: fields returns the exact field names of the struct at a path
// (nil where the object is a map). There keys are compared without regard
// to case for duplicates, as in Check, and a key that differs from a
// field name only in case is an error naming the field it resembles:
// encoding/json would silently take "executorMemoryMb" as
// "executorMemoryMB", and the contract says field names are exact. Keys
// that match no field at all are left to the decoder (unknown fields).
func CheckFields(data []byte, fields func(path string) []string) *Error {
	s := &scanner{data: data, fields: fields}
	if fields != nil {
		s.fold = func(path string) bool { return fields(path) != nil }
	}
	e, _ := s.value("", 0)
	return e
}

type scanner struct {
	data   []byte
	i      int
	fold   func(string) bool
	fields func(string) []string
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value. ok is false at a syntax error (scanning stops).
func (s *scanner) value(path string, depth int) (e *Error, ok bool) {
	s.skipSpace()
	if s.i >= len(s.data) {
		return nil, false
	}
	switch s.data[s.i] {
	case '{':
		return s.object(path, depth+1)
	case '[':
		return s.array(path, depth+1)
	case '"':
		_, e, ok := s.str(path, false)
		return e, ok
	}
	// A number or a literal: its syntax is the decoder's business.
	start := s.i
	for s.i < len(s.data) && !endsScalar(s.data[s.i]) {
		s.i++
	}
	return nil, s.i > start
}

// endsScalar reports whether c ends a number or literal.
func endsScalar(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n', ':':
		return true
	}
	return false
}

func childPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (s *scanner) object(path string, depth int) (*Error, bool) {
	if depth > MaxDepth {
		return &Error{Path: path, Msg: fmt.Sprintf("nested deeper than %d levels", MaxDepth)}, true
	}
	s.i++ // '{'
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return nil, true
	}
	fold := s.fold != nil && s.fold(path)
	var known []string
	if s.fields != nil {
		known = s.fields(path)
	}
	// folded key -> the key as sent; a few keys are compared in a slice,
	// more in a map
	var small [16][2]string
	seenList := small[:0]
	var seenMap map[string]string
	lookup := func(k string) (string, bool) {
		if seenMap != nil {
			f, ok := seenMap[k]
			return f, ok
		}
		for _, p := range seenList {
			if p[0] == k {
				return p[1], true
			}
		}
		return "", false
	}
	remember := func(k, key string) {
		if seenMap == nil && len(seenList) < len(small) {
			seenList = append(seenList, [2]string{k, key})
			return
		}
		if seenMap == nil {
			seenMap = make(map[string]string, 2*len(small))
			for _, p := range seenList {
				seenMap[p[0]] = p[1]
			}
		}
		seenMap[k] = key
	}
	for {
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return nil, false
		}
		key, e, ok := s.str(path, true)
		if e != nil || !ok {
			return e, ok
		}
		k := key
		if fold {
			k = foldKey(key)
		}
		if e := caseMismatch(path, key, known); e != nil {
			return e, true
		}
		if first, dup := lookup(k); dup {
			msg := "appears twice in the same object; send each field once"
			if first != key {
				msg = fmt.Sprintf("appears twice in the same object, as %q and %q (field names are matched without regard to case); send each field once", first, key)
			}
			return &Error{Path: childPath(path, key), Msg: msg}, true
		}
		remember(k, key)
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return nil, false
		}
		s.i++
		if e, ok := s.member(path, key, depth); e != nil || !ok {
			return e, ok
		}
		s.skipSpace()
		if s.i >= len(s.data) {
			return nil, false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil, true
		default:
			return nil, false
		}
	}
}

// member checks the value of key in the object at path. The value's path
// is only built when it is needed: for an object or an array, or to name
// it in an error.
func (s *scanner) member(path, key string, depth int) (*Error, bool) {
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] != '{' && s.data[s.i] != '[' {
		e, ok := s.value("", depth)
		if e != nil {
			e.Path = childPath(path, key)
		}
		return e, ok
	}
	return s.value(childPath(path, key), depth)
}

func (s *scanner) array(path string, depth int) (*Error, bool) {
	if depth > MaxDepth {
		return &Error{Path: path, Msg: fmt.Sprintf("nested deeper than %d levels", MaxDepth)}, true
	}
	s.i++ // '['
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return nil, true
	}
	for n := 0; ; n++ {
		if e, ok := s.value(path+"["+strconv.Itoa(n)+"]", depth); e != nil || !ok {
			return e, ok
		}
		s.skipSpace()
		if s.i >= len(s.data) {
			return nil, false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil, true
		default:
			return nil, false
		}
	}
}

// str scans a string at s.i (its opening quote). When it is an object key
// (isKey), its decoded text is returned and errors name the object (path);
// otherwise errors name the value (also path).
func (s *scanner) str(path string, isKey bool) (string, *Error, bool) {
	bad := func(msg string) (string, *Error, bool) { return "", &Error{Path: path, Msg: msg}, true }
	s.i++ // '"'
	// Fast path: printable ASCII without escapes, the common case. Only
	// keys are returned (values are only checked).
	for j := s.i; j < len(s.data); j++ {
		c := s.data[j]
		if c == '"' {
			var out string
			if isKey {
				out = string(s.data[s.i:j])
			}
			s.i = j + 1
			return out, nil, true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	var b strings.Builder
	for {
		if s.i >= len(s.data) {
			return "", nil, false
		}
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return b.String(), nil, true
		case c == '\\':
			if s.i+1 >= len(s.data) {
				return "", nil, false
			}
			esc := s.data[s.i+1]
			switch esc {
			case '"', '\\', '/':
				b.WriteByte(esc)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(s.data, s.i+2)
				if !ok {
					return "", nil, false
				}
				s.i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if r < 0xDC00 && s.i+1 < len(s.data) && s.data[s.i] == '\\' && s.data[s.i+1] == 'u' {
						r2, ok2 = hex4(s.data, s.i+2)
					}
					if !ok2 || r2 < 0xDC00 || r2 > 0xDFFF {
						if isKey {
							return bad(fmt.Sprintf("has a key that is not valid Unicode: \\u%04X is a lone UTF-16 surrogate", r))
						}
						return bad(fmt.Sprintf("must be valid Unicode: \\u%04X is a lone UTF-16 surrogate (escape the character as a surrogate pair, or send it as UTF-8)", r))
					}
					r = utf16.DecodeRune(r, r2)
					s.i += 6
				}
				b.WriteRune(r)
				continue
			default:
				return "", nil, false
			}
			s.i += 2
		case c < 0x20:
			return "", nil, false // a raw control character: a syntax error
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			s.i++
		default:
			r, size := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && size == 1 {
				if isKey {
					return bad(fmt.Sprintf("has a key that is not valid UTF-8 (byte 0x%02X at offset %d)", c, s.i))
				}
				return bad(fmt.Sprintf("must be valid UTF-8: byte 0x%02X at offset %d is not; send text as UTF-8", c, s.i))
			}
			b.WriteRune(r)
			s.i += size
		}
	}
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// foldKey maps every rune to the smallest rune of its case-folding orbit,
// so that two keys encoding/json would match to the same struct field fold
// to the same text.
func foldKey(k string) string {
	ascii, lower := true, false
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		lower = lower || ('a' <= c && c <= 'z')
	}
	if ascii {
		// An ASCII letter's orbit is its two cases (plus, for k and s, a
		// rune above ASCII): the smallest is the upper case.
		if !lower {
			return k
		}
		b := []byte(k)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - ('a' - 'A')
			}
		}
		return string(b)
	}
	var b strings.Builder
	for _, r := range k {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}

// caseMismatch is the error for a key that is none of the exact field
// names known but matches one of them without regard to case.
func caseMismatch(path, key string, known []string) *Error {
	if known == nil {
		return nil
	}
	fk := foldKey(key)
	for _, f := range known {
		if f == key {
			return nil
		}
	}
	for _, f := range known {
		if foldKey(f) == fk {
			return &Error{Path: childPath(path, key), Msg: fmt.Sprintf("unknown field; did you mean %q? (field names are case-sensitive)", f)}
		}
	}
	return nil
}
