package sparkrest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func FuzzDecodeCreateRequest(f *testing.F) {
	f.Add(sparkPiRequest)
	f.Add(`{"action":"CreateSubmissionRequest","clientSparkVersion":"3.5.8","appResource":"a.jar","mainClass":"A","sparkProperties":{"spark.executor.instances":2,"spark.executor.memory":"1g"}}`)
	f.Add(`{"action":"CreateSubmissionRequest","clientSparkVersion":"3.5.8","appResource":"a.jar","mainClass":"A","sparkProperties":{"sparkpack.deadline":"60","spark.cores.max":"1e9"},"appArgs":null,"x":[]}`)
	f.Add(`{}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := DecodeCreateRequest(strings.NewReader(body))
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *RequestError: %v", err, err)
			}
			return
		}
		if req.Action != ActionCreateRequest || req.ClientSparkVersion == "" || req.AppResource == "" || req.MainClass == "" || req.SparkProperties == nil {
			t.Fatalf("accepted an incomplete request: %+v", req)
		}
		// What was accepted decodes the same after a round trip.
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeCreateRequest(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		if again.AppResource != req.AppResource || again.MainClass != req.MainClass || len(again.SparkProperties) != len(req.SparkProperties) || len(again.AppArgs) != len(req.AppArgs) {
			t.Fatalf("round trip changed the request: %+v -> %+v", req, again)
		}
		// Mapping and validation never panic; an accepted spec is valid.
		spec, _, err := ToSpec(req, 1)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("ToSpec error %T: %v", err, err)
			}
			return
		}
		if err := spec.Validate(); err == nil {
			if spec.Executors < 1 || spec.ExecutorCores < 1 || spec.ExecutorMemoryMB < 1 {
				t.Fatalf("valid spec with bad sizes: %+v", spec)
			}
		}
	})
}
