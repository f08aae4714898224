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
