package secretenv

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// FileVars are the variables that name files holding the worker's secrets
// or credentials: the codec keys, the Temporal TLS files and profile, and
// the cloud credential files the content store's SDK reads. The tool
// sandbox never mounts what they name.
var FileVars = []string{
	"AGENTLOOP_CODEC_KEYS_FILE",
	"TEMPORAL_TLS_CLIENT_KEY_PATH",
	"TEMPORAL_TLS_KEY",
	"TEMPORAL_TLS_CLIENT_CERT_PATH",
	"TEMPORAL_TLS_CERT",
	"TEMPORAL_TLS_SERVER_CA_CERT_PATH",
	"TEMPORAL_TLS_CA",
	"TEMPORAL_CONFIG_FILE",
	"AWS_SHARED_CREDENTIALS_FILE",
	"AWS_CONFIG_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE",
	"GOOGLE_APPLICATION_CREDENTIALS",
}

// keyFileVars name files that hold private keys: only their owner should
// be able to read them.
var keyFileVars = []string{
	"AGENTLOOP_CODEC_KEYS_FILE",
	"TEMPORAL_TLS_CLIENT_KEY_PATH",
	"TEMPORAL_TLS_KEY",
}

// Files returns the absolute paths the variables in FileVars name, for
// those that are set. getenv is os.Getenv in a program.
func Files(getenv func(string) string) []string {
	var files []string
	for _, name := range FileVars {
		if p := getenv(name); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				files = append(files, abs)
			}
		}
	}
	return files
}

// CheckPermissions returns a warning for each key file (codec keys, TLS
// client key) that its group or other users may read: any process of
// those users could copy the keys without going near the worker.
func CheckPermissions(getenv func(string) string) []string {
	var warnings []string
	for _, name := range keyFileVars {
		p := getenv(name)
		if p == "" {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			continue // the worker's own read of the file reports this
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			warnings = append(warnings, fmt.Sprintf("%s (%s) is readable by its group or other users (mode %04o); chmod 600 it", p, name, perm))
		}
	}
	return warnings
}

// Protect marks the process non-dumpable, so that processes of the same
// user cannot read its memory or /proc/PID/environ (which keeps the
// secrets the process started with even after Unset), attach a debugger,
// or get a core dump of it. Call it first thing in main.
func Protect() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
