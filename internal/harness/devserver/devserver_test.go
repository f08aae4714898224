package devserver

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The demo starts its dev server from scripts/server-args; it must get what
// the tests' dev servers get.
func TestServerArgsMatchScript(t *testing.T) {
	out, err := exec.Command("../../../scripts/server-args").Output()
	require.NoError(t, err)
	require.Equal(t, strings.Join(ServerArgs(), " "), strings.TrimSpace(string(out)))
}

// Go's tests find the CLI where the scripts build it.
func TestCLIDirMatchesScript(t *testing.T) {
	out, err := exec.Command("bash", "-c", ". ../../../scripts/lib.sh && echo \"$TEMPORAL_CLI_DIR_NAME ${TEMPORAL_CLI_MODULE}\"").Output()
	require.NoError(t, err)
	require.Equal(t, CLIDir+" "+CLIModule, strings.TrimSpace(string(out)))
}
