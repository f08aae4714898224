package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/durationpb"

	agentloop "github.com/durable-agents/agentloop"

	"github.com/durable-agents/agentloop/agentapi"
)

// Ports are a Temporal server's ports: each service's gRPC and membership
// ports, the frontend's HTTP API and the metrics endpoint (0: none).
type Ports struct {
	Frontend, FrontendHTTP, FrontendMembership int
	History, HistoryMembership                 int
	Matching, MatchingMembership               int
	Worker, WorkerMembership                   int
	Metrics                                    int
}

// DefaultPorts are the ports of the compose file's server (the template's
// defaults) and a metrics endpoint on 8000.
func DefaultPorts() Ports {
	return Ports{7233, 7243, 6933, 7234, 6934, 7235, 6935, 7239, 6939, 8000}
}

// FreePorts picks ten free ports below the kernel's ephemeral range
// (32768-60999 on Linux), so that a server restarted on them finds them
// free again: a port the kernel hands out at random could be taken by
// another connection while the server is down.
func FreePorts() (Ports, error) {
	var ps []int
	seen := map[int]bool{}
	for tries := 0; len(ps) < 10 && tries < 1000; tries++ {
		p := 20000 + rand.IntN(12000)
		if seen[p] {
			continue
		}
		seen[p] = true
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			ps = append(ps, p)
		}
	}
	if len(ps) < 10 {
		return Ports{}, errors.New("no ten free ports between 20000 and 32000")
	}
	return Ports{ps[0], ps[1], ps[2], ps[3], ps[4], ps[5], ps[6], ps[7], ps[8], ps[9]}, nil
}

func (p Ports) env() map[string]string {
	env := map[string]string{
		"FRONTEND_GRPC_PORT": strconv.Itoa(p.Frontend), "FRONTEND_HTTP_PORT": strconv.Itoa(p.FrontendHTTP),
		"FRONTEND_MEMBERSHIP_PORT": strconv.Itoa(p.FrontendMembership),
		"HISTORY_GRPC_PORT":        strconv.Itoa(p.History), "HISTORY_MEMBERSHIP_PORT": strconv.Itoa(p.HistoryMembership),
		"MATCHING_GRPC_PORT": strconv.Itoa(p.Matching), "MATCHING_MEMBERSHIP_PORT": strconv.Itoa(p.MatchingMembership),
		"WORKER_GRPC_PORT": strconv.Itoa(p.Worker), "WORKER_MEMBERSHIP_PORT": strconv.Itoa(p.WorkerMembership),
		"PROMETHEUS_ENDPOINT": "",
	}
	if p.Metrics != 0 {
		env["PROMETHEUS_ENDPOINT"] = fmt.Sprintf("127.0.0.1:%d", p.Metrics)
	}
	return env
}

// ServerOptions configure a Temporal server of the stack.
type ServerOptions struct {
	// Dir holds the rendered config, the dynamic config, the log and the
	// pid file.
	Dir   string
	Ports Ports
	// Postgres is where its databases are.
	Postgres *Postgres
	// Database and Visibility name its databases; empty means the compose
	// file's (DBNAME, VISIBILITY_DBNAME).
	Database, Visibility string
}

// Server is a Temporal server process of the stack.
type Server struct {
	// Address is the frontend's host:port.
	Address string
	// MetricsURL serves the server's Prometheus metrics ("" without).
	MetricsURL string
	// Namespace is the namespace it serves the agent's runs in.
	Namespace string
	Log       string
	o         ServerOptions
	bins      Binaries
	compose   Compose
	p         *proc
}

// StartServer sets up the server's databases, renders its configuration
// from the compose file, starts it, and registers the default namespace
// and the agent's search attributes, as the compose file's services do.
func StartServer(ctx context.Context, bins Binaries, compose Compose, o ServerOptions) (*Server, error) {
	plugin := compose.Env("DB", "postgres12")
	if o.Database == "" {
		o.Database = compose.Env("DBNAME", "temporal")
	}
	if o.Visibility == "" {
		o.Visibility = compose.Env("VISIBILITY_DBNAME", "temporal_visibility")
	}
	s := &Server{
		Address:   fmt.Sprintf("127.0.0.1:%d", o.Ports.Frontend),
		Namespace: "default",
		Log:       filepath.Join(o.Dir, "temporal-server.log"),
		o:         o, bins: bins, compose: compose,
	}
	if o.Ports.Metrics != 0 {
		s.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", o.Ports.Metrics)
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "config"), 0o755); err != nil {
		return nil, err
	}
	if err := o.Postgres.SetupDatabase(ctx, plugin, o.Database, "temporal"); err != nil {
		return nil, err
	}
	if err := o.Postgres.SetupDatabase(ctx, plugin, o.Visibility, "visibility"); err != nil {
		return nil, err
	}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	if err := s.register(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// writeConfig writes the dynamic config and renders config/docker.yaml.
func (s *Server) writeConfig() error {
	dyn := filepath.Join(s.o.Dir, filepath.Base(agentloop.DynamicConfigPath))
	if err := os.WriteFile(dyn, agentloop.DynamicConfig, 0o644); err != nil {
		return err
	}
	mod, err := s.bins.serverModuleDir()
	if err != nil {
		return err
	}
	overrides := s.o.Ports.env()
	overrides["POSTGRES_SEEDS"] = "127.0.0.1"
	overrides["DB_PORT"] = strconv.Itoa(s.o.Postgres.Port)
	overrides["BIND_ON_IP"] = "127.0.0.1"
	overrides["TEMPORAL_BROADCAST_ADDRESS"] = "127.0.0.1"
	overrides["DYNAMIC_CONFIG_FILE_PATH"] = dyn
	overrides["DBNAME"] = s.o.Database
	overrides["VISIBILITY_DBNAME"] = s.o.Visibility
	cfg, err := renderConfig(filepath.Join(mod, "docker", "config_template.yaml"), s.compose, overrides)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.o.Dir, "config", "docker.yaml"), cfg, 0o644)
}

func (s *Server) pidFile() string { return filepath.Join(s.o.Dir, "temporal-server.pid") }

// Start starts the server process on its config (again, after Stop) and
// waits until its frontend answers.
func (s *Server) Start(ctx context.Context) error {
	if p := readProc("temporal-server", s.pidFile()); p != nil {
		return fmt.Errorf("the Temporal server of %s is already running (pid %d)", s.o.Dir, p.pid)
	}
	cmd := exec.Command(s.bins.Server, "--root", s.o.Dir, "--config", "config", "--env", "docker", "--allow-no-auth", "start")
	p, err := startProc("temporal-server", cmd, s.Log, s.pidFile())
	if err != nil {
		return err
	}
	s.p = p
	return s.waitServing(ctx)
}

// Stop stops the server as an orchestrator does (SIGTERM: it leaves the
// membership ring and closes its shards) and waits for it to exit.
func (s *Server) Stop() error {
	if s.p == nil {
		return nil
	}
	return s.p.stop(syscall.SIGTERM, 30*time.Second)
}

// Kill kills the server with SIGKILL.
func (s *Server) Kill() error {
	if s.p == nil {
		return nil
	}
	return s.p.stop(syscall.SIGKILL, 10*time.Second)
}

// Restart stops the server and starts it again.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start(ctx)
}

// Pid is the server process's pid.
func (s *Server) Pid() int {
	if s.p == nil {
		return 0
	}
	return s.p.pid
}

// Dial connects a client to the server's namespace.
func (s *Server) Dial() (client.Client, error) {
	return client.Dial(client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quiet()})
}

func quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// waitServing waits until the frontend answers and the system namespace's
// workflows can be listed: the history shards are up.
func (s *Server) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last error
	for {
		last = s.ping(ctx)
		if last == nil {
			return nil
		}
		if !s.p.alive() {
			return fmt.Errorf("the Temporal server exited: %s", logTail(s.Log))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Temporal server on %s is not serving: %v; %s", s.Address, last, logTail(s.Log))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: "temporal-system", Logger: quiet(),
		ConnectionOptions: client.ConnectionOptions{}})
	if err != nil {
		return err
	}
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.WorkflowService().DescribeNamespace(pctx, &workflowservice.DescribeNamespaceRequest{Namespace: "temporal-system"})
	return err
}

// register registers the default namespace with the compose file's
// retention (auto-setup's DEFAULT_NAMESPACE_RETENTION) and the agent's
// search attributes (temporal-search-attributes in the compose file), and
// waits until both can be used.
func (s *Server) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := client.Dial(client.Options{HostPort: s.Address, Namespace: s.Namespace, Logger: quiet()})
	if err != nil {
		return err
	}
	defer c.Close()
	retention, err := time.ParseDuration(s.compose.Env("DEFAULT_NAMESPACE_RETENTION", "24h"))
	if err != nil {
		return fmt.Errorf("DEFAULT_NAMESPACE_RETENTION: %w", err)
	}
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        s.Namespace,
		WorkflowExecutionRetentionPeriod: durationpb.New(retention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register namespace %s: %w", s.Namespace, err)
	}
	attrs := map[string]enumspb.IndexedValueType{}
	for name, typ := range agentapi.SearchAttributes {
		v, ok := enumspb.IndexedValueType_value["INDEXED_VALUE_TYPE_"+strings.ToUpper(typ)]
		if !ok {
			return fmt.Errorf("search attribute %s: unknown type %s", name, typ)
		}
		attrs[name] = enumspb.IndexedValueType(v)
	}
	for {
		err := s.addSearchAttributes(ctx, c, attrs)
		if err == nil {
			err = s.probeSearchAttributes(ctx, c, attrs)
		}
		if err == nil {
			// The frontend's namespace cache has the new attributes; the
			// history service's refreshes on the same interval
			// (system.namespaceCacheRefreshInterval, 2 s): until then a
			// run's upsert could fail its workflow task.
			time.Sleep(namespaceCacheRefresh)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register search attributes: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// namespaceCacheRefresh is the server's default
// system.namespaceCacheRefreshInterval.
const namespaceCacheRefresh = 2 * time.Second

// probeSearchAttributes starts a workflow with every attribute set, which
// the frontend accepts only once its namespace cache maps them (SQL
// visibility maps each to a column per namespace), and terminates it.
func (s *Server) probeSearchAttributes(ctx context.Context, c client.Client, attrs map[string]enumspb.IndexedValueType) error {
	var updates []temporal.SearchAttributeUpdate
	for name, typ := range attrs {
		switch typ {
		case enumspb.INDEXED_VALUE_TYPE_INT:
			updates = append(updates, temporal.NewSearchAttributeKeyInt64(name).ValueSet(0))
		case enumspb.INDEXED_VALUE_TYPE_DOUBLE:
			updates = append(updates, temporal.NewSearchAttributeKeyFloat64(name).ValueSet(0))
		case enumspb.INDEXED_VALUE_TYPE_TEXT:
			updates = append(updates, temporal.NewSearchAttributeKeyString(name).ValueSet("probe"))
		case enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST:
			updates = append(updates, temporal.NewSearchAttributeKeyKeywordList(name).ValueSet([]string{"probe"}))
		default:
			updates = append(updates, temporal.NewSearchAttributeKeyKeyword(name).ValueSet("probe"))
		}
	}
	id := "stack-search-attribute-probe"
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "stack-probe",
		TypedSearchAttributes: temporal.NewSearchAttributes(updates...)}, "StackProbe")
	if err != nil {
		return err
	}
	return c.TerminateWorkflow(ctx, id, run.GetRunID(), "search attributes are mapped")
}

// addSearchAttributes adds what the namespace lacks and reports an error
// until it has all of them.
func (s *Server) addSearchAttributes(ctx context.Context, c client.Client, attrs map[string]enumspb.IndexedValueType) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.Namespace})
	if err != nil {
		return err
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range attrs {
		if have.GetCustomAttributes()[name] != typ {
			missing[name] = typ
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: s.Namespace, SearchAttributes: missing,
	})
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(missing))
	return fmt.Errorf("search attributes %s added, not yet listed", strings.Join(names, ", "))
}

// logTail is the end of a log file, for an error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log " + path
	}
	// The server's last words are a stack trace; the reason is in its
	// last error or fatal line.
	reason := ""
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.Contains(line, []byte(`"level":"fatal"`)) || bytes.Contains(line, []byte(`"level":"error"`)) {
			reason = string(line[:min(len(line), 1500)])
		}
	}
	return fmt.Sprintf("last error: %s\nthe end of %s:\n%s", reason, path, tail(b, 2000))
}
