package secretenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnset(t *testing.T) {
	for _, name := range Names {
		t.Setenv(name, "") // restored after the test
		require.NoError(t, os.Unsetenv(name))
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-PLANTED")
	t.Setenv("AGENTLOOP_CODEC_KEYS", "k1:PLANTED")
	t.Setenv("AGENTLOOP_SECRETENV_KEEP", "kept")
	require.Equal(t, []string{"ANTHROPIC_API_KEY", "AGENTLOOP_CODEC_KEYS"}, Unset())
	_, ok := os.LookupEnv("ANTHROPIC_API_KEY")
	require.False(t, ok)
	require.Equal(t, "kept", os.Getenv("AGENTLOOP_SECRETENV_KEEP"))

	// A child process sees neither.
	out, err := exec.Command("env").Output()
	require.NoError(t, err)
	require.NotContains(t, string(out), "PLANTED")
	require.True(t, strings.Contains(string(out), "AGENTLOOP_SECRETENV_KEEP=kept"))
	require.Empty(t, Unset())
}
