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
