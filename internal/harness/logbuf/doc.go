// Package logbuf is a buffer that collects what a child process or a
// logger writes from its own goroutines while a test reads it.
package logbuf
