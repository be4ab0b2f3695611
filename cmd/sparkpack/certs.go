package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/internal/tlsutil"
)

// runCerts writes a CA and a certificate signed by it: what the compose
// deployment uses for TLS between sparkpack, its clients and the Mesos
// master. Files that exist are kept, so that it can run at every start.
func runCerts(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("certs", stderr)
	dir := fs.String("dir", "certs", "directory to write ca.pem, ca-key.pem, server.pem and server-key.pem into")
	hosts := fs.String("hosts", "localhost,127.0.0.1", "comma-separated DNS names and IP addresses the server certificate is for")
	days := fs.Int("days", 365, "validity of the certificates in days")
	owner := fs.String("owner", "", "uid:gid to give the files (when run as root for another user), e.g. 10001:10001")
	force := fs.Bool("force", false, "replace existing files")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *days < 1 {
		return fmt.Errorf("--days must be at least 1")
	}
	var hostList []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hostList = append(hostList, h)
		}
	}
	if len(hostList) == 0 {
		return fmt.Errorf("--hosts names no host; e.g. --hosts sparkpack,localhost,127.0.0.1")
	}
	uid, gid := -1, -1
	if *owner != "" {
		u, g, ok := strings.Cut(*owner, ":")
		var err1, err2 error
		uid, err1 = strconv.Atoi(u)
		gid, err2 = strconv.Atoi(g)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("--owner %q: want uid:gid, e.g. 10001:10001", *owner)
		}
	}
	names := []string{"ca.pem", "ca-key.pem", "server.pem", "server-key.pem"}
	if !*force {
		existing := 0
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(*dir, n)); err == nil {
				existing++
			}
		}
		if existing == len(names) {
			fmt.Fprintf(stdout, "certs: %s already holds a CA and a server certificate; kept (--force replaces them)\n", *dir)
			return nil
		}
		if existing > 0 {
			return fmt.Errorf("%s holds only some of %v; remove them or pass --force", *dir, names)
		}
	}
	validFor := time.Duration(*days) * 24 * time.Hour
	ca, err := tlsutil.NewCA("sparkpack generated CA", validFor)
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	cert, key, err := ca.Issue(hostList, validFor)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	files := map[string]struct {
		b    []byte
		mode os.FileMode
	}{"ca.pem": {ca.CertPEM(), 0o644}, "ca-key.pem": {caKey, 0o600}, "server.pem": {cert, 0o644}, "server-key.pem": {key, 0o600}}
	for _, n := range names {
		path := filepath.Join(*dir, n)
		if err := os.WriteFile(path+".tmp", files[n].b, files[n].mode); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if uid >= 0 {
			if err := os.Chown(path+".tmp", uid, gid); err != nil {
				return fmt.Errorf("--owner: %w", err)
			}
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "certs: wrote %s/{%s} for %s, valid %d days; clients trust ca.pem\n", *dir, strings.Join(names, ","), strings.Join(hostList, ","), *days)
	return nil
}

// runHealth probes this container's own sparkpack (the image's
// HEALTHCHECK): GET --path on 127.0.0.1 at the port of SPARKPACK_LISTEN (or
// SPARKPACK_HEALTH_PORT), over https when SPARKPACK_TLS_CERT is set. The
// certificate is not verified: the probe talks to its own process over
// loopback, sends no credentials, and the certificate need not name
// 127.0.0.1.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("health", stderr)
	path := fs.String("path", "/healthz", "path to probe (/healthz: alive; /readyz: ready, the database reachable)")
	timeout := fs.Duration("timeout", 4*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack health [flags]   (probes the local sparkpack's --path on SPARKPACK_LISTEN's port (or SPARKPACK_HEALTH_PORT), https with SPARKPACK_TLS_CERT; exit 0 on 200)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return fmt.Errorf("--timeout %s: want a positive duration, e.g. 4s", *timeout)
	}
	if !strings.HasPrefix(*path, "/") {
		return fmt.Errorf("--path %q: want a path on the local sparkpack, such as /healthz or /readyz", *path)
	}
	port := os.Getenv("SPARKPACK_HEALTH_PORT")
	if port == "" {
		_, p, err := net.SplitHostPort(envDefault("SPARKPACK_LISTEN", "127.0.0.1:8080"))
		if err != nil {
			return fmt.Errorf("SPARKPACK_LISTEN: %w", err)
		}
		port = p
	}
	scheme := "http"
	if os.Getenv("SPARKPACK_TLS_CERT") != "" {
		scheme = "https"
	}
	url := scheme + "://" + net.JoinHostPort("127.0.0.1", port) + *path
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // loopback self-probe, see above
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(url + ": " + resp.Status)
	}
	fmt.Fprintln(stdout, url+": "+resp.Status)
	return nil
}
