package mesossim

import (
	"fmt"
	"net/http"
)

// Follower returns the HTTP handler of a master that does not lead, as a
// real Mesos 1.12 master answers while another leads (checked against two
// real masters electing their leader in ZooKeeper): the v1 APIs (/api/v1,
// /api/v1/scheduler and their /master/ forms) answer 307 with Location
// //<leader>/master/api/v1[/scheduler], or 503 "No leader elected" while
// leader returns ""; /version and /health answer as on any master. It
// holds no state: a failover in a test moves the leading Master's handler
// to another address (the registry carries the state in Mesos).
func Follower(leader func() string) http.Handler {
	redirect := func(path string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			l := leader()
			if l == "" {
				writeError(w, errorf(http.StatusServiceUnavailable, "No leader elected"))
				return
			}
			w.Header().Set("Location", "//"+l+path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", redirect("/master/api/v1/scheduler"))
	mux.HandleFunc("/master/api/v1/scheduler", redirect("/master/api/v1/scheduler"))
	mux.HandleFunc("/api/v1", redirect("/master/api/v1"))
	mux.HandleFunc("/master/api/v1", redirect("/master/api/v1"))
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { writeEmpty(w, http.StatusOK) })
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":%q}`, Version)
	})
	return mux
}
