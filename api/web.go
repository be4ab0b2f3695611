package api

import (
	"embed"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

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
	static := staticFiles(sub)
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

// staticFiles serves the files of fsys under /static/. Any other path
// (a folder, a name that is not valid UTF-8 or not a valid fs path, a file
// that is not there) gets a JSON 404 naming the path: http.FileServer
// would list folders and answer some odd names with a 500.
func staticFiles(fsys fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, "/static/")), "/")
		notFound := func() {
			writeError(w, http.StatusNotFound, "path", "no such dashboard file: "+r.URL.Path)
		}
		if name == "" || !utf8.ValidString(name) || !fs.ValidPath(name) {
			notFound()
			return
		}
		f, err := fsys.Open(name)
		if err != nil {
			notFound()
			return
		}
		defer f.Close()
		info, err := f.Stat()
		content, seekable := f.(io.ReadSeeker)
		if err != nil || info.IsDir() || !seekable {
			notFound()
			return
		}
		http.ServeContent(w, r, name, time.Time{}, content)
	})
}
