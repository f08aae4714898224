// Package termsession holds tests that drive the real starter binary
// through a real terminal (a pty) against a dev server and a real worker
// process with the scripted demo model: coming back to a session, the
// session list, approvals, and every "try this" of the README and docs.
package termsession
