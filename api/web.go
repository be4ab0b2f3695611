package api

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gorilla/mux"
)

//go:embed web
var webFS embed.FS

// contentSecurityPolicy keeps the dashboard to its own scripts and styles.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// MountDashboard serves the dashboard at / and its assets under /static/.
func (s *Server) MountDashboard(r *mux.Router) {
	sub, err := fs.Sub(webFS, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	static := http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	secure := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Referrer-Policy", "no-referrer")
			h.ServeHTTP(w, r)
		})
	}
	r.PathPrefix("/static/").Handler(secure(static)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/", secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := webFS.ReadFile("web/index.html")
		if err != nil {
			writeError(w, http.StatusInternalServerError, "", "dashboard missing from this build")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	}))).Methods(http.MethodGet, http.MethodHead)
}
