package mesossim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gogo/protobuf/proto"
)

const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/x-protobuf"
	mediaRecordIO = "application/recordio"

	maxBodyBytes = 16 << 20
)

// httpError is an error answered as a text/plain body with a status code,
// the way the Mesos master answers every error.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *httpError {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, e *httpError) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(e.msg)))
	w.WriteHeader(e.code)
	_, _ = io.WriteString(w, e.msg)
}

func writeEmpty(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(code)
}

// requestMedia checks the method and Content-Type of a v1 API request and
// returns the request media type.
func requestMedia(r *http.Request) (string, *httpError) {
	if r.Method != http.MethodPost {
		return "", &httpError{code: http.StatusMethodNotAllowed,
			msg: fmt.Sprintf("405 Method Not Allowed. Expecting one of { 'POST' }, but received '%s'.", r.Method)}
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != mediaJSON && mt != mediaProtobuf) {
		return "", errorf(http.StatusUnsupportedMediaType, "Expecting 'Content-Type' of application/json or application/x-protobuf")
	}
	return mt, nil
}

// responseMedia picks the media type of a response body from Accept (and
// Message-Accept when the client asks for application/recordio). It returns
// the message media type and whether the stream is to be labelled
// application/recordio.
func responseMedia(r *http.Request, reqMedia string) (msg string, recordio bool, herr *httpError) {
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return reqMedia, false, nil
	}
	best := ""
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				continue
			}
		}
		switch mt {
		case mediaJSON, mediaProtobuf:
			if best == "" {
				best = mt
			}
		case mediaRecordIO:
			m := r.Header.Get("Message-Accept")
			mm, _, _ := mime.ParseMediaType(m)
			switch {
			case mm == mediaJSON || mm == mediaProtobuf:
				return mm, true, nil
			case m == "" || mm == "*/*":
				return reqMedia, true, nil
			}
		case "*/*", "application/*":
			if best == "" {
				best = reqMedia
			}
		}
	}
	if best == "" {
		return "", false, errorf(http.StatusNotAcceptable, "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'")
	}
	return best, false, nil
}

func readBody(r *http.Request) ([]byte, *httpError) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Failed to read request body: %v", err)
	}
	if len(b) > maxBodyBytes {
		return nil, errorf(http.StatusRequestEntityTooLarge, "Request body too large")
	}
	return b, nil
}

// jsonSyntaxError renders a JSON syntax error like the Mesos master does
// ("syntax error at line 1 near: <rest of the input>").
func jsonSyntaxError(body []byte) *httpError {
	var v any
	err := json.Unmarshal(body, &v)
	if err == nil {
		return nil
	}
	off := len(body)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	if off > len(body) {
		off = len(body)
	}
	start := off - 1
	if start < 0 {
		start = 0
	}
	if off >= len(body) {
		start = len(body)
	}
	line := 1 + bytes.Count(body[:start], []byte("\n"))
	return errorf(http.StatusBadRequest, "Failed to parse body into JSON: syntax error at line %d near: %s", line, body[start:])
}

// jsonTypeField returns the top-level "type" string of a JSON object body.
func jsonTypeField(body []byte) (typ string, present bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return "", false
	}
	raw, ok := top["type"]
	if !ok {
		return "", false
	}
	if err := json.Unmarshal(raw, &typ); err != nil {
		return "", false
	}
	return typ, true
}

// decodeCall decodes a call body in the given media type. knownTypes maps the
// type names of the call's enum; prefix is "scheduler::Call" or
// "master::Call". An unknown type name is reported as the master does:
// "Expecting 'type' to be present".
func decodeCall(media string, body []byte, msg proto.Message, knownTypes map[string]int32, prefix string) *httpError {
	missingType := errorf(http.StatusBadRequest, "Failed to validate %s: Expecting 'type' to be present", prefix)
	if media == mediaJSON {
		if e := jsonSyntaxError(body); e != nil {
			return e
		}
		var top any
		_ = json.Unmarshal(body, &top)
		if _, ok := top.(map[string]any); !ok {
			return errorf(http.StatusBadRequest, "Failed to convert JSON into Call protobuf: Expecting a JSON object")
		}
		typ, present := jsonTypeField(body)
		if !present {
			return missingType
		}
		if _, ok := knownTypes[typ]; !ok {
			return missingType
		}
		if err := json.Unmarshal(body, msg); err != nil {
			return errorf(http.StatusBadRequest, "Failed to convert JSON into Call protobuf: %s", cleanDecodeError(err))
		}
		return nil
	}
	if err := proto.Unmarshal(body, msg); err != nil {
		return errorf(http.StatusBadRequest, "Failed to parse body into Call protobuf")
	}
	return nil
}

func cleanDecodeError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "ffjson error: ")
	return s
}

// encodeMessage encodes a response or event in the given media type. JSON
// output goes through fixJSON so that it looks like the real master's.
func encodeMessage(media string, m proto.Message) ([]byte, error) {
	if media == mediaProtobuf {
		return proto.Marshal(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return fixJSON(b), nil
}

// keepEmptyLists are JSON keys the real master prints as [] when empty.
var keepEmptyLists = map[string]bool{
	"frameworks": true, "completed_frameworks": true, "recovered_agents": true,
	"agents": true, "tasks": true, "completed_tasks": true, "unreachable_tasks": true,
	"orphan_tasks": true, "executors": true, "orphan_executors": true,
}

// fixJSON post-processes mesos-go's generated JSON (which prints repeated
// fields without omitempty as null): null lists are dropped, or printed as
// [] for the keys the real master prints that way. Strings are left alone.
func fixJSON(in []byte) []byte {
	out := make([]byte, 0, len(in))
	i := 0
	for i < len(in) {
		c := in[i]
		if c != '"' {
			out = append(out, c)
			i++
			continue
		}
		j := i + 1
		for j < len(in) {
			if in[j] == '\\' {
				j += 2
				continue
			}
			if in[j] == '"' {
				break
			}
			j++
		}
		if j >= len(in) {
			return append(out, in[i:]...)
		}
		s := in[i : j+1]
		if j+5 < len(in)+0 && in[j+1] == ':' && bytes.HasPrefix(in[j+2:], []byte("null")) {
			key := string(s[1 : len(s)-1])
			if keepEmptyLists[key] {
				out = append(out, s...)
				out = append(out, ":[]"...)
				i = j + 6
				continue
			}
			// drop the member and one adjacent comma
			i = j + 6
			if len(out) > 0 && out[len(out)-1] == ',' {
				out = out[:len(out)-1]
			} else if i < len(in) && in[i] == ',' {
				i++
			}
			continue
		}
		out = append(out, s...)
		i = j + 1
	}
	return out
}

// recordIO frames one record: "<decimal length>\n<bytes>".
func recordIO(b []byte) []byte {
	p := strconv.Itoa(len(b))
	out := make([]byte, 0, len(p)+1+len(b))
	out = append(out, p...)
	out = append(out, '\n')
	return append(out, b...)
}

// readCall checks the request's media types and the master's availability,
// then decodes the call into msg. When it returns false it has written the
// error response.
func (m *Master) readCall(w http.ResponseWriter, r *http.Request, msg proto.Message, knownTypes map[string]int32, prefix string) (media string, ok bool) {
	media, herr := requestMedia(r)
	if herr != nil {
		if herr.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "POST")
		}
		writeError(w, herr)
		return "", false
	}
	if herr := m.unavailable(); herr != nil {
		writeError(w, herr)
		return "", false
	}
	body, herr := readBody(r)
	if herr != nil {
		writeError(w, herr)
		return "", false
	}
	if herr := decodeCall(media, body, msg, knownTypes, prefix); herr != nil {
		writeError(w, herr)
		return "", false
	}
	return media, true
}
