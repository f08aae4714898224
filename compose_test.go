package agentloop_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// No Docker engine runs in CI, so docker-compose.yml is checked by parsing:
// the standard stack is there, wired the way the worker expects.
func TestDockerCompose(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       any               `yaml:"build"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   any               `yaml:"depends_on"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	require.NoError(t, yaml.Unmarshal(b, &compose))

	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker"} {
		require.Contains(t, compose.Services, name)
	}
	temporal := compose.Services["temporal"]
	require.Contains(t, temporal.Image, "temporalio/auto-setup:1.29")
	require.Equal(t, "postgres12", temporal.Environment["DB"])
	require.Equal(t, "postgresql", temporal.Environment["POSTGRES_SEEDS"])
	require.Contains(t, temporal.Ports, "7233:7233")
	require.Contains(t, compose.Services["temporal-ui"].Image, "temporalio/ui:")
	require.Equal(t, "temporal:7233", compose.Services["temporal-ui"].Environment["TEMPORAL_ADDRESS"])
	worker := compose.Services["worker"]
	require.NotNil(t, worker.Build, "the worker is built from this repository")
	require.Equal(t, "temporal:7233", worker.Environment["TEMPORAL_ADDRESS"])
	require.NotNil(t, worker.DependsOn)
	_, err = os.Stat("Dockerfile")
	require.NoError(t, err, "the worker service builds from the Dockerfile")
}
