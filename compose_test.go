package agentloop_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	agentloop "github.com/durable-agents/agentloop"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/stack"
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

// scripts/stack (internal/harness/stack) runs the server the compose file
// describes: the same versions, the same environment rendered through the
// same template (internal/harness/stack checks the rendering), the same dynamic
// config file, the same search attributes; and the dynamic config is what
// the tests' dev servers get.
func TestComposeMatchesStack(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	require.Equal(t, string(b), string(agentloop.ComposeFile), "the stack embeds this compose file")
	c, err := stack.ParseCompose(b)
	require.NoError(t, err)
	require.Equal(t, "temporalio/auto-setup:"+stack.ServerVersion, c.ServerImage, "the stack builds this server version")
	require.Equal(t, "temporalio/ui:"+stack.UIVersion, c.UIImage, "the stack builds this UI version")
	shards, err := strconv.Atoi(c.ServerEnv["NUM_HISTORY_SHARDS"])
	require.NoError(t, err, "NUM_HISTORY_SHARDS is set explicitly")
	require.GreaterOrEqual(t, shards, 4)

	var compose struct {
		Services map[string]struct {
			Volumes []string `yaml:"volumes"`
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &compose))
	// The temporal service mounts deploy/dynamicconfig.yaml where its
	// DYNAMIC_CONFIG_FILE_PATH (relative to /etc/temporal) points.
	mount := "./" + agentloop.DynamicConfigPath + ":/etc/temporal/" + c.ServerEnv["DYNAMIC_CONFIG_FILE_PATH"] + ":ro"
	require.Contains(t, compose.Services["temporal"].Volumes, mount)
	dyn, err := os.ReadFile(agentloop.DynamicConfigPath)
	require.NoError(t, err)
	require.Equal(t, string(dyn), string(agentloop.DynamicConfig))

	// The same search attributes as agentapi.SearchAttributes, which the
	// stack and the dev servers register.
	cmd := strings.Join(compose.Services["temporal-search-attributes"].Command, " ")
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`--name (\w+) --type (\w+)`).FindAllStringSubmatch(cmd, -1) {
		got[m[1]] = m[2]
	}
	require.Equal(t, agentapi.SearchAttributes, got)

	// The dev servers' dynamic config values are the file's.
	var file map[string][]struct {
		Value any `yaml:"value"`
	}
	require.NoError(t, yaml.Unmarshal(dyn, &file))
	fromFile := map[string]string{}
	for k, vs := range file {
		require.Len(t, vs, 1, k)
		fromFile[k] = fmt.Sprint(vs[0].Value)
	}
	fromDev := map[string]string{}
	args := devserver.ServerArgs()
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--dynamic-config-value" {
			k, v, _ := strings.Cut(args[i+1], "=")
			fromDev[k] = v
		}
	}
	require.Equal(t, fromDev, fromFile)
}
