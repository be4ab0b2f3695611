package jsontext

import "encoding/json"

// AppendString appends s as a JSON string, byte for byte as
// encoding/json.Marshal writes it. Printable ASCII without quotes,
// backslashes or the HTML characters Marshal escapes (< > &), the common
// case, is copied as it is; anything else goes through Marshal (which
// escapes what it must, and writes invalid UTF-8 as U+FFFD).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
