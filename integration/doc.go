// Package integration holds sparkpack's end-to-end tests: the REST API,
// the dashboard in a real headless Chromium, and (in mesossim) the Mesos
// master emulator they run against. Tests here use real PostgreSQL and
// real HTTP; nothing in this package is imported by the sparkpack binary
// except the emulator.
package integration
