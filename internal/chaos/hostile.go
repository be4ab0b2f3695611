package chaos

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

// hostileRequest is one request a client should not make; want says what
// answers are right (all of them 4xx).
type hostileRequest struct {
	what, method, path, token, body string
	sparkREST                       bool
	// refused: the request must be refused for want of rights (401/403):
	// a 2xx is an unauthorised action.
	refused bool
}

const goodJob = `{"name":"h","app":{"appResource":"local:///opt/spark/examples/jars/spark-examples.jar","mainClass":"org.apache.spark.examples.SparkPi"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`

func withApp(app string) string {
	return `{"name":"h","app":` + app + `,"executors":1,"executorCores":1,"executorMemoryMB":1024}`
}

const sparkCreate = `{"action":"CreateSubmissionRequest","clientSparkVersion":"3.5.8","appResource":"local:///opt/spark/examples/jars/spark-examples.jar",
"mainClass":"MAIN","appArgs":["--conf","spark.mesos.role=*"],"environmentVariables":{},"sparkProperties":{"spark.app.name":"h","spark.executor.instances":"1",PROPS}}`

func hostileRequests(victim string) []hostileRequest {
	res := `"appResource":"local:///opt/spark/examples/jars/spark-examples.jar"`
	return []hostileRequest{
		{what: "malformed JSON", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: `{"name": `},
		{what: "wrong type", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Replace(goodJob, `"executors":1`, `"executors":"1"`, 1)},
		{what: "huge number", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Replace(goodJob, `"executors":1`, `"executors":1e999`, 1)},
		{what: "NUL in a string", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Replace(goodJob, `"name":"h"`, `"name":"a\u0000b"`, 1)},
		{what: "invalid UTF-8", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Replace(goodJob, `"name":"h"`, "\"name\":\"\xff\xfe\"", 1)},
		{what: "lone surrogate", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Replace(goodJob, `"name":"h"`, `"name":"\ud800"`, 1)},
		{what: "deep nesting", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: strings.Repeat("[", 100000)},
		{what: "SparkSubmit class", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: withApp(`{` + res + `,"mainClass":"org.apache.spark.deploy.SparkSubmit","args":["--conf","spark.mesos.role=*"]}`)},
		{what: "PythonGatewayServer class", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: withApp(`{` + res + `,"mainClass":"org.apache.spark.api.python.PythonGatewayServer"}`)},
		{what: "principal in sparkConf", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.mesos.principal":"root"}}`)},
		{what: "JVM options in sparkConf", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.driver.extraJavaOptions":"-Dspark.mesos.role=*"}}`)},
		{what: "LD_PRELOAD", method: "POST", path: "/api/v1/jobs", token: TokenChaos, body: withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","environment":{"LD_PRELOAD":"/tmp/x.so"}}`)},
		{what: "label=a=NUL", method: "GET", path: "/api/v1/jobs?label=a=%00"},
		{what: "label=NUL=a", method: "GET", path: "/api/v1/jobs?label=%00=a"},
		{what: "state invalid UTF-8", method: "GET", path: "/api/v1/jobs?state=%ff"},
		{what: "bad escape", method: "GET", path: "/api/v1/jobs?cursor=%zz"},
		{what: "unknown cost parameter", method: "GET", path: "/api/v1/cost?x=1"},
		{what: "cluster limit NUL", method: "GET", path: "/api/v1/cluster?limit=%00"},
		{what: "queues repeated limit", method: "GET", path: "/api/v1/queues?limit=1&limit=2"},
		{what: "job id NUL", method: "GET", path: "/api/v1/jobs/%00"},
		{what: "job id not a UUID", method: "DELETE", path: "/api/v1/jobs/not-a-uuid", token: TokenChaos},
		{what: "submit without a token", method: "POST", path: "/api/v1/jobs", body: goodJob, refused: true},
		{what: "submit with a read token", method: "POST", path: "/api/v1/jobs", token: TokenReader, body: goodJob, refused: true},
		{what: "submit with an unknown token", method: "POST", path: "/api/v1/jobs", token: "nope-0123456789abcdef", body: goodJob, refused: true},
		{what: "cancel another's job", method: "DELETE", path: "/api/v1/jobs/" + victim, token: TokenOther, refused: true},
		{what: "cancel with a read token", method: "DELETE", path: "/api/v1/jobs/" + victim, token: TokenReader, refused: true},
		{what: "cancel without a token", method: "DELETE", path: "/api/v1/jobs/" + victim, refused: true},
		{what: "Spark REST: SparkSubmit class", sparkREST: true, method: "POST", path: "/v1/submissions/create",
			body: strings.Replace(strings.Replace(sparkCreate, "MAIN", "org.apache.spark.deploy.SparkSubmit", 1), ",PROPS", "", 1)},
		{what: "Spark REST: docker image", sparkREST: true, method: "POST", path: "/v1/submissions/create",
			body: strings.Replace(strings.Replace(sparkCreate, "MAIN", "org.apache.spark.examples.SparkPi", 1), "PROPS", `"spark.mesos.executor.docker.image":"evil"`, 1)},
		{what: "Spark REST: malformed", sparkREST: true, method: "POST", path: "/v1/submissions/create", body: `{"action":`},
		{what: "Spark REST: kill another's job", sparkREST: true, method: "POST", path: "/v1/submissions/kill/" + victim, token: TokenOther, refused: true},
		{what: "Spark REST: kill with a read token", sparkREST: true, method: "POST", path: "/v1/submissions/kill/" + victim, token: TokenReader, refused: true},
	}
}

// hostile sends c.Hostile requests drawn from hostileRequests to random
// instances: each must be a 4xx; one refused for want of rights must be
// 401 or 403.
func hostile(ctx context.Context, s *Stack, c Config, r *Result) {
	// A job of the chaos token that the others try to cancel.
	victim := uuid.NewString()
	in := s.Live(0)
	req, _ := http.NewRequest("POST", in.API+"/api/v1/jobs", bytes.NewReader(jobBody(victim, 120)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+TokenChaos)
	if resp, err := client.Do(req); err != nil || (resp.StatusCode != 201 && resp.StatusCode != 200) {
		r.note("cannot submit the victim job: %v", err)
	} else {
		resp.Body.Close()
	}
	reqs := hostileRequests(victim)
	for i := 0; i < c.Hostile && ctx.Err() == nil; i++ {
		h := reqs[i%len(reqs)]
		if i >= len(reqs) {
			h = reqs[rand.IntN(len(reqs))]
		}
		in := s.Live(rand.IntN(len(s.Instances)))
		base := in.API
		if h.sparkREST {
			base = in.SparkREST
		}
		req, err := http.NewRequestWithContext(ctx, h.method, base+h.path, strings.NewReader(h.body))
		if err != nil {
			continue
		}
		if h.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if h.token != "" {
			req.Header.Set("Authorization", "Bearer "+h.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			r.note("%s: %v", h.what, err)
			continue
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		r.Hostile++
		switch {
		case resp.StatusCode >= 500:
			r.ClientError5xx++
			if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
				r.NoRetryAfter++
			}
			r.note("%s on %s: %d %s", h.what, in.ID, resp.StatusCode, strings.TrimSpace(string(raw)))
		case h.refused && resp.StatusCode != 401 && resp.StatusCode != 403 && resp.StatusCode != 429:
			r.Unauthorised++
			r.note("%s on %s: %d, want 401 or 403", h.what, in.ID, resp.StatusCode)
		case resp.StatusCode < 400:
			r.Unauthorised++ // a hostile request was carried out
			r.note("%s on %s: %d %s", h.what, in.ID, resp.StatusCode, strings.TrimSpace(string(raw)))
		}
	}
	// The victim is cancelled by its owner and must end like any job.
	del, _ := http.NewRequest("DELETE", s.Live(0).API+"/api/v1/jobs/"+victim, nil)
	del.Header.Set("Authorization", "Bearer "+TokenChaos)
	if resp, err := client.Do(del); err == nil {
		resp.Body.Close()
	}
	waitCtx(ctx, 500*time.Millisecond)
	s.cancelled[victim] = true // it ends CANCELLED or KILLED: not a breach
	s.Check(ctx, r, []string{victim}, nil, c.Settle, s.seen)
}
