// Package syncbuf holds Buffer, a bytes.Buffer that many goroutines may
// write at once: what the tests give a logger (or a child process's output)
// and read back while it still writes. It is imported by tests only, and
// imports nothing of sparkpack's.
package syncbuf
