package stack

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"gopkg.in/yaml.v3"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// binaries returns the stack's binaries, or skips the test when they are
// not installed and nothing asked for them: scripts/test installs them and
// sets TEMPORAL_SERVER, and then a missing one fails.
func binaries(t *testing.T) Binaries {
	t.Helper()
	b, err := FindBinaries()
	if err == nil {
		_, err = b.serverModuleDir()
	}
	if err != nil {
		if os.Getenv("TEMPORAL_SERVER") != "" || os.Getenv("TEMPORAL_STACK") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return b
}

// The config the stack runs is the server's docker template rendered with
// the compose file's environment: change a value there and the config
// follows; only the host's addresses, ports and paths differ.
func TestRenderedConfigFollowsCompose(t *testing.T) {
	b := binaries(t)
	compose, err := LoadCompose()
	require.NoError(t, err)
	mod, err := b.serverModuleDir()
	require.NoError(t, err)
	tmpl := filepath.Join(mod, "docker", "config_template.yaml")

	type sqlStore struct {
		PluginName   string `yaml:"pluginName"`
		DatabaseName string `yaml:"databaseName"`
		ConnectAddr  string `yaml:"connectAddr"`
		User         string `yaml:"user"`
		Password     string `yaml:"password"`
		MaxConns     int    `yaml:"maxConns"`
	}
	var cfg struct {
		Persistence struct {
			NumHistoryShards int    `yaml:"numHistoryShards"`
			VisibilityStore  string `yaml:"visibilityStore"`
			Datastores       map[string]struct {
				SQL sqlStore `yaml:"sql"`
			} `yaml:"datastores"`
		} `yaml:"persistence"`
		Services map[string]struct {
			RPC struct {
				GRPCPort int    `yaml:"grpcPort"`
				BindOnIP string `yaml:"bindOnIP"`
			} `yaml:"rpc"`
		} `yaml:"services"`
		DynamicConfigClient struct {
			Filepath string `yaml:"filepath"`
		} `yaml:"dynamicConfigClient"`
	}
	ports := DefaultPorts()
	overrides := ports.env()
	overrides["POSTGRES_SEEDS"], overrides["DB_PORT"], overrides["BIND_ON_IP"] = "127.0.0.1", "15432", "127.0.0.1"
	overrides["DYNAMIC_CONFIG_FILE_PATH"] = "/somewhere/dynamicconfig.yaml"
	out, err := renderConfig(tmpl, compose, overrides)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(out, &cfg))

	shards, _ := strconv.Atoi(compose.ServerEnv["NUM_HISTORY_SHARDS"])
	require.GreaterOrEqual(t, shards, 4)
	require.Equal(t, shards, cfg.Persistence.NumHistoryShards)
	def := cfg.Persistence.Datastores["default"].SQL
	vis := cfg.Persistence.Datastores[cfg.Persistence.VisibilityStore].SQL
	for _, s := range []sqlStore{def, vis} {
		require.Equal(t, compose.ServerEnv["DB"], s.PluginName)
		require.Equal(t, compose.ServerEnv["POSTGRES_USER"], s.User)
		require.Equal(t, compose.ServerEnv["POSTGRES_PWD"], s.Password)
		require.Equal(t, "127.0.0.1:15432", s.ConnectAddr)
	}
	require.Equal(t, compose.ServerEnv["DBNAME"], def.DatabaseName)
	require.Equal(t, compose.ServerEnv["VISIBILITY_DBNAME"], vis.DatabaseName)
	require.Equal(t, 7233, cfg.Services["frontend"].RPC.GRPCPort)
	require.Equal(t, "127.0.0.1", cfg.Services["history"].RPC.BindOnIP)
	require.Equal(t, "/somewhere/dynamicconfig.yaml", cfg.DynamicConfigClient.Filepath)

	compose.ServerEnv["NUM_HISTORY_SHARDS"] = "8"
	compose.ServerEnv["SQL_MAX_CONNS"] = "7"
	out, err = renderConfig(tmpl, compose, overrides)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(out, &cfg))
	require.Equal(t, 8, cfg.Persistence.NumHistoryShards)
	require.Equal(t, 7, cfg.Persistence.Datastores["default"].SQL.MaxConns)

	_, err = renderConfig(tmpl, compose, map[string]string{"NUM_HISTORY_SHARDS": "1"})
	require.ErrorContains(t, err, "may not override NUM_HISTORY_SHARDS")
}

// waitTimer is a workflow that sleeps on a durable timer.
func waitTimer(ctx workflow.Context, d time.Duration) (string, error) {
	if err := workflow.Sleep(ctx, d); err != nil {
		return "", err
	}
	return "woke", nil
}

// The whole stack, from nothing: PostgreSQL, the schema, the server with
// 4 shards, the namespace and search attributes, the Web UI; a workflow
// waiting on a timer rides out a restart of the server process.
func TestStackUpRestartDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a Temporal server")
	}
	b := binaries(t)
	dir, err := os.MkdirTemp("", "stack-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	start := time.Now()
	s, err := upOnFreePorts(t, ctx, dir, b.UI != "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Down() })
	t.Logf("stack up in %v", time.Since(start).Round(time.Millisecond))

	c, err := s.Server.Dial()
	require.NoError(t, err)
	defer c.Close()
	info, err := c.WorkflowService().GetClusterInfo(ctx, &workflowservice.GetClusterInfoRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 4, info.GetHistoryShardCount())
	ns, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration())
	require.NoError(t, agentclient.CheckSearchAttributes(ctx, c, "default"), "what the worker checks before runs upsert")
	if s.UI != nil {
		resp, err := http.Get(s.UI.URL + "/api/v1/namespaces")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the Web UI reaches the server")
	}

	w := worker.New(c, "stack-test", worker.Options{})
	w.RegisterWorkflow(waitTimer)
	require.NoError(t, w.Start())
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "stack-test", ID: "timer",
		TypedSearchAttributes: temporalSearchAttributes()}, waitTimer, 4*time.Second)
	require.NoError(t, err)
	time.Sleep(time.Second)
	down := time.Now()
	require.NoError(t, s.Server.Stop())
	t.Logf("server stopped in %v", time.Since(down).Round(time.Millisecond))
	up := time.Now()
	require.NoError(t, s.Server.Start(ctx))
	t.Logf("server serving again %v after start", time.Since(up).Round(time.Millisecond))
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, "woke", got)

	require.NoError(t, s.Down())
	require.False(t, Running(dir), StatusDir(dir))
}

func temporalSearchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(agentapi.AgentStatus.ValueSet("started"), agentapi.AgentTurns.ValueSet(0))
}

// scripts/lib.sh installs what FindBinaries looks for.
func TestLibShInstallsTheseVersions(t *testing.T) {
	b, err := os.ReadFile("../../../scripts/lib.sh")
	require.NoError(t, err)
	lib := string(b)
	require.Contains(t, lib, `TEMPORAL_SERVER_MODULES="`+ServerModule+" "+SQLToolModule+`"`)
	require.Contains(t, lib, `TEMPORAL_SERVER_DIR_NAME="`+ServerDir+`"`)
	require.Contains(t, lib, `TEMPORAL_UI_MODULE="`+UIModule+`"`)
	require.Contains(t, lib, `TEMPORAL_UI_DIR_NAME="`+UIDir+`"`)
}

// upOnFreePorts brings the stack up on ports free a moment ago. Another
// test process can bind one of them first (three test suites at once
// did), so a stack whose server or PostgreSQL found its port taken is
// brought up again on others.
func upOnFreePorts(t *testing.T, ctx context.Context, dir string, ui bool) (*Stack, error) {
	require.NoError(t, os.Chmod(dir, 0o755)) // PostgreSQL's user reaches each try's directory through it
	for try := 1; ; try++ {
		ports, err := FreePorts()
		require.NoError(t, err)
		pgPort, err := FreePorts()
		require.NoError(t, err)
		o := Options{Dir: filepath.Join(dir, strconv.Itoa(try)), Ports: ports, PostgresPort: pgPort.Frontend}
		if ui {
			o.UIPort = pgPort.FrontendHTTP
		}
		s, err := Up(ctx, o)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
		t.Logf("a port was taken; again on others: %v", err)
	}
}
