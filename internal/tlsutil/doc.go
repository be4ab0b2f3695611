// Package tlsutil holds sparkpack's TLS plumbing: a server certificate
// that reloads itself (on SIGHUP or when its files change, keeping the
// old pair when the new one does not load), client configurations that
// trust a CA file (TLS to the Mesos master, the CLI to a private CA), and
// a small certificate authority for tests and the compose deployment's
// generated certificates (sparkpack certs).
//
// It must not import other sparkpack packages: serve, the CLI and tests
// wire it.
package tlsutil
