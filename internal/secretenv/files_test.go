package secretenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestFilesAndPermissions(t *testing.T) {
	dir := t.TempDir()
	keys, tls, cert := filepath.Join(dir, "keys"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "tls.crt")
	require.NoError(t, os.WriteFile(keys, []byte("k1:x"), 0o644))
	require.NoError(t, os.WriteFile(tls, []byte("key"), 0o600))
	require.NoError(t, os.WriteFile(cert, []byte("cert"), 0o644))
	env := map[string]string{"AGENTLOOP_CODEC_KEYS_FILE": keys, "TEMPORAL_TLS_KEY": tls, "TEMPORAL_TLS_CERT": cert}
	getenv := func(k string) string { return env[k] }

	require.ElementsMatch(t, []string{keys, tls, cert}, Files(getenv))
	warnings := CheckPermissions(getenv)
	require.Len(t, warnings, 1, "only the group- and world-readable key file; a certificate is public")
	require.True(t, strings.Contains(warnings[0], keys) && strings.Contains(warnings[0], "0644"), warnings[0])
}

func TestProtect(t *testing.T) {
	require.NoError(t, Protect())
	dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	require.NoError(t, err)
	require.Zero(t, dumpable)
}
