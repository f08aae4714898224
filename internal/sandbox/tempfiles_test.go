package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A command's temporary files are gone once Wait returns, in every mode
// (under Landlock they are removed off the command's restricted thread,
// which may not remove them).
func TestTemporaryFilesRemovedAfterWait(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for mode, s := range modes(t, Config{}) {
		out, _ := run(t, s, t.TempDir(), `echo cache > "$HOME/cache" && echo x > "$TMPDIR/x" && echo ok`, false)
		require.Contains(t, out, "ok", mode)
		left, err := filepath.Glob(filepath.Join(tmp, tempPattern("cmd")+"*"))
		require.NoError(t, err)
		require.Empty(t, left, mode)
	}
}

// The files of a worker that was SIGKILLed are removed by the next one;
// those of running processes (this one) stay.
func TestStaleTemporaryFilesOfDeadProcessesRemoved(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := cmd.Process.Pid
	deadHome := filepath.Join(dir, tempPrefix+strconv.Itoa(dead)+"-cmd-123", "home")
	require.NoError(t, os.MkdirAll(deadHome, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(deadHome, "cache"), []byte("x"), 0o600))
	deadMask := filepath.Join(dir, tempPrefix+strconv.Itoa(dead)+"-mask-456")
	require.NoError(t, os.WriteFile(deadMask, nil, 0))
	mine := filepath.Join(dir, tempPattern("cmd")+"789")
	require.NoError(t, os.Mkdir(mine, 0o700))
	unrelated := filepath.Join(dir, tempPrefix+"notapid")
	require.NoError(t, os.Mkdir(unrelated, 0o700))

	removeStale(dir)

	require.NoDirExists(t, filepath.Dir(deadHome))
	require.NoFileExists(t, deadMask)
	require.DirExists(t, mine)
	require.DirExists(t, unrelated)
}
