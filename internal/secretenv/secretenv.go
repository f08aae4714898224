// Package secretenv keeps the worker's own secrets away from the processes
// its tools start, whatever the tool sandbox (internal/sandbox) is set to.
// The worker calls Protect first thing, which makes it non-dumpable: other
// processes of its user cannot read its memory or its /proc/PID/environ,
// which keeps the variables it started with even after they are unset.
// It reads its configuration, then calls Unset, so that nothing it starts
// inherits a secret (-sandbox=none passes the rest of its environment on).
// Files names the files that hold secrets, for the sandbox to hide, and
// CheckPermissions warns about key files others may read.
package secretenv

import "os"

// Names are the variables that hold the worker's secrets: model provider
// keys, Temporal credentials and the payload codec's keys and token.
var Names = []string{
	"ANTHROPIC_API_KEY",
	"OPENAI_API_KEY",
	"OPENROUTER_API_KEY",
	"OPENAI_COMPATIBLE_API_KEY",
	"TEMPORAL_API_KEY",
	"TEMPORAL_TLS_CLIENT_KEY_DATA",
	"TEMPORAL_TLS_KEY_DATA",
	"TEMPORAL_CODEC_AUTH",
	"AGENTLOOP_CODEC_KEYS",
	"AGENTLOOP_CODEC_TOKEN",
	"AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN",
}

// Unset removes every variable in Names from the process environment and
// returns the names that were set. Call it once at startup, after the
// configuration has been read and before any worker starts.
func Unset() []string {
	var removed []string
	for _, name := range Names {
		if _, ok := os.LookupEnv(name); ok {
			_ = os.Unsetenv(name)
			removed = append(removed, name)
		}
	}
	return removed
}
