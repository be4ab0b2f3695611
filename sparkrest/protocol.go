package sparkrest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/sparkpack/sparkpack/internal/strictjson"
)

// ProtocolVersion is the only version of the protocol this server speaks.
const ProtocolVersion = "v1"

// StatusUnknownProtocolVersion is Spark's status code for a request to a
// protocol version the server does not know.
const StatusUnknownProtocolVersion = 468

// Actions, as Spark names its message classes.
const (
	ActionCreateRequest  = "CreateSubmissionRequest"
	ActionCreateResponse = "CreateSubmissionResponse"
	ActionStatusResponse = "SubmissionStatusResponse"
	ActionKillResponse   = "KillSubmissionResponse"
	ActionErrorResponse  = "ErrorResponse"
)

// Driver states reported by SubmissionStatusResponse.
const (
	DriverQueued   = "QUEUED"
	DriverRunning  = "RUNNING"
	DriverFinished = "FINISHED"
	DriverFailed   = "FAILED"
	DriverKilled   = "KILLED"
	DriverNotFound = "NOT_FOUND"
)

// CreateSubmissionRequest is the body of POST /v1/submissions/create.
type CreateSubmissionRequest struct {
	Action               string            `json:"action"`
	AppArgs              []string          `json:"appArgs"`
	AppResource          string            `json:"appResource"`
	ClientSparkVersion   string            `json:"clientSparkVersion"`
	EnvironmentVariables map[string]string `json:"environmentVariables"`
	MainClass            string            `json:"mainClass"`
	Message              string            `json:"message,omitempty"`
	SparkProperties      map[string]string `json:"sparkProperties"`
	// UnknownFields lists the top-level fields the request had that the
	// protocol does not define (Spark answers them in "unknownFields").
	UnknownFields []string `json:"-"`
}

// CreateSubmissionResponse answers a create. Its fields are exactly those
// of Spark's class: Spark's client rejects unknown ones.
type CreateSubmissionResponse struct {
	Action             string   `json:"action"`
	Message            string   `json:"message,omitempty"`
	ServerSparkVersion string   `json:"serverSparkVersion"`
	SubmissionID       string   `json:"submissionId,omitempty"`
	Success            bool     `json:"success"`
	UnknownFields      []string `json:"unknownFields,omitempty"`
}

// SubmissionStatusResponse answers GET /v1/submissions/status/{id}.
type SubmissionStatusResponse struct {
	Action             string `json:"action"`
	DriverState        string `json:"driverState,omitempty"`
	Message            string `json:"message,omitempty"`
	ServerSparkVersion string `json:"serverSparkVersion"`
	SubmissionID       string `json:"submissionId"`
	Success            bool   `json:"success"`
	WorkerHostPort     string `json:"workerHostPort,omitempty"`
	WorkerID           string `json:"workerId,omitempty"`
}

// KillSubmissionResponse answers POST /v1/submissions/kill/{id}.
type KillSubmissionResponse struct {
	Action             string `json:"action"`
	Message            string `json:"message,omitempty"`
	ServerSparkVersion string `json:"serverSparkVersion"`
	SubmissionID       string `json:"submissionId"`
	Success            bool   `json:"success"`
}

// ErrorResponse is Spark's answer to a request it cannot process.
type ErrorResponse struct {
	Action                 string `json:"action"`
	HighestProtocolVersion string `json:"highestProtocolVersion,omitempty"`
	Message                string `json:"message"`
	ServerSparkVersion     string `json:"serverSparkVersion"`
	Success                bool   `json:"success"`
}

// RequestError is a create request that cannot be decoded or mapped.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}

// MaxBodyBytes bounds a create request (1 MiB, as the native API).
const MaxBodyBytes = 1 << 20

// DecodeCreateRequest reads a CreateSubmissionRequest as Spark's client
// writes it. Like Spark's server it requires "action" (which must be
// CreateSubmissionRequest), "clientSparkVersion", "appResource",
// "mainClass" and "sparkProperties"; "appArgs" and "environmentVariables"
// may be missing (empty). Property and environment values may be JSON
// strings, numbers or booleans (Jackson accepts those too; they are kept as
// their JSON text). Unknown top-level fields are not an error: they are
// listed in UnknownFields. Strings that are not valid UTF-8 or hold a lone
// surrogate escape, and keys given twice, are refused naming the field
// (encoding/json would store U+FFFD, or keep the last key). Every failure
// is a *RequestError.
func DecodeCreateRequest(r io.Reader) (CreateSubmissionRequest, error) {
	var req CreateSubmissionRequest
	body, err := io.ReadAll(io.LimitReader(r, MaxBodyBytes+1))
	if err != nil {
		return req, badRequest("Malformed request: reading the body: %v", err)
	}
	if len(body) > MaxBodyBytes {
		return req, badRequest("Malformed request: the body is larger than %d bytes", MaxBodyBytes)
	}
	if e := strictjson.Check(body, nil); e != nil {
		if e.Path == "" {
			return req, badRequest("Malformed request: %s", e.Msg)
		}
		return req, badRequest("Malformed request: field '%s' %s", truncate(e.Path, 200), e.Msg)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return req, badRequest("Malformed request: the body must be one JSON object: %v", err)
	}
	if raw == nil {
		return req, badRequest("Malformed request: the body must be one JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, badRequest("Malformed request: data after the JSON object")
	}
	str := func(name string, dst *string) error {
		v, ok := raw[name]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return badRequest("Malformed request: field '%s' must be a string", name)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"action", &req.Action}, {"clientSparkVersion", &req.ClientSparkVersion}, {"appResource", &req.AppResource},
		{"mainClass", &req.MainClass}, {"message", &req.Message}} {
		if err := str(f.name, f.dst); err != nil {
			return req, err
		}
	}
	if req.Action == "" {
		return req, badRequest("Malformed request: the action field is missing")
	}
	if req.Action != ActionCreateRequest {
		return req, badRequest("Received message of unexpected type %s; POST a %s to /%s/submissions/create", truncate(req.Action, 64), ActionCreateRequest, ProtocolVersion)
	}
	if v, ok := raw["appArgs"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &req.AppArgs); err != nil {
			return req, badRequest("Malformed request: field 'appArgs' must be an array of strings")
		}
		if where, null := strictjson.NullMember(v); null {
			return req, badRequest("Malformed request: field 'appArgs%s' is null; an argument must be a string", where)
		}
	}
	if req.SparkProperties, err = stringMap(raw, "sparkProperties"); err != nil {
		return req, err
	}
	if req.EnvironmentVariables, err = stringMap(raw, "environmentVariables"); err != nil {
		return req, err
	}
	for k := range raw {
		switch k {
		case "action", "appArgs", "appResource", "clientSparkVersion", "environmentVariables", "mainClass", "message", "sparkProperties":
		default:
			req.UnknownFields = append(req.UnknownFields, k)
		}
	}
	sort.Strings(req.UnknownFields)
	switch {
	case req.ClientSparkVersion == "":
		return req, badRequest("Malformed request: field 'clientSparkVersion' is missing in message %s", ActionCreateRequest)
	case req.SparkProperties == nil:
		return req, badRequest("Malformed request: no Spark properties set (field 'sparkProperties')")
	case req.AppResource == "":
		return req, badRequest("Malformed request: field 'appResource' is missing in message %s", ActionCreateRequest)
	case req.MainClass == "":
		return req, badRequest("Malformed request: main class 'mainClass' is missing (sparkpack runs JVM applications)")
	}
	return req, nil
}

// stringMap decodes an object whose values are strings, numbers or
// booleans; nil when the field is absent or null.
func stringMap(raw map[string]json.RawMessage, name string) (map[string]string, error) {
	v, ok := raw[name]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		return nil, badRequest("Malformed request: field '%s' must be an object of string values", name)
	}
	if k, null := strictjson.NullMember(v); null {
		// Decoded, it would be "" (a setting or variable nobody wrote).
		return nil, badRequest("Malformed request: %s.%s is null; a value must be a string", name, truncate(k, 80))
	}
	out := make(map[string]string, len(m))
	for k, rv := range m {
		var s string
		if err := json.Unmarshal(rv, &s); err == nil {
			out[k] = s
			continue
		}
		var n json.Number
		if err := json.Unmarshal(rv, &n); err == nil {
			out[k] = n.String()
			continue
		}
		var b bool
		if err := json.Unmarshal(rv, &b); err == nil {
			out[k] = strconv.FormatBool(b)
			continue
		}
		return nil, badRequest("Malformed request: %s.%s must be a string", name, truncate(k, 80))
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
