// Package testharness runs the real sparkpack binary for the end-to-end
// tests: those over the Mesos emulator (integration) and those over a real
// Mesos build (integration/realmesos) share it instead of each keeping a
// copy. It is imported by tests only.
//
// It must not import sparkpack's own packages: it drives the binary from
// outside, as an operator would.
package testharness
