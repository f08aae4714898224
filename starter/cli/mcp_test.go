package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMCPToolPatterns(t *testing.T) {
	got, err := mcpToolPatterns("fs,docs")
	require.NoError(t, err)
	require.Equal(t, []string{"fs__*", "docs__*"}, got)

	// A config file: only its server names are read, so ${VAR}s the
	// starter's environment lacks do not matter.
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"fs": {"command": "x"}, "docs": {"url": "https://h/mcp", "headers": {"A": "${UNSET_HERE}"}}}}`), 0o600))
	got, err = mcpToolPatterns(cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"docs__*", "fs__*"}, got)

	got, err = mcpToolPatterns("")
	require.NoError(t, err)
	require.Empty(t, got)
}
