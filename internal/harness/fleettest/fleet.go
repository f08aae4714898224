package fleettest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/workflows"
)

// Options shape a fleet.
type Options struct {
	// Decide answers the model's requests (Model).
	Decide func(*Request) (Answer, error)
	// ChunkDelay is the model's delay between streamed chunks.
	ChunkDelay time.Duration
	// WorkerArgs are extra flags for every host's worker.
	WorkerArgs []string
}

// Fleet is a test's fleet: a dev server, a shared S3-compatible content
// store, a model server and the hosts the test adds. Everything stops when
// the test ends; the hosts' logs are printed when it fails.
type Fleet struct {
	T      testing.TB
	Dir    string
	Server *devserver.Server
	Client client.Client
	Store  *s3server.Server
	Model  *Model
	// Queue is the fleet's task queue; Workspace a directory every host
	// holds (they share the machine).
	Queue, Workspace string
	// Bin is the worker binary.
	Bin string

	mu    sync.Mutex
	hosts []*Host
}

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

// worker builds the worker binary once per test binary.
func worker(t testing.TB) string {
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "fleettest-bin-"); buildErr != nil {
			return
		}
		builtBin, buildErr = testenv.WorkerBin(buildDir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// Start starts a fleet's server, store and model; it has no hosts yet.
func Start(t testing.TB, o Options) *Fleet {
	t.Helper()
	f := &Fleet{T: t, Dir: t.TempDir(), Queue: agentapi.TaskQueue, Bin: worker(t)}
	f.Workspace = filepath.Join(f.Dir, "workspace")
	if err := os.MkdirAll(f.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srvLog, err := os.Create(filepath.Join(f.Dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Server, err = devserver.Start(ctx, devserver.Options{Log: srvLog}); err != nil {
		t.Fatal(err)
	}
	f.Client = f.Server.Client()
	f.Store = s3server.Start(t)
	delay := o.ChunkDelay
	if f.Model, err = StartModel(delay, o.Decide); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.stopHosts()
		f.Model.Close()
		_ = f.Server.Stop()
		srvLog.Close()
	})
	return f
}

// Env is the environment a host gets by default: this process's, without
// its Temporal, store and provider settings, plus the store's credentials
// and the model server as the openai-compatible provider.
func (f *Fleet) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TEMPORAL_") || strings.HasPrefix(name, "AGENTLOOP_") ||
			strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "OPENAI_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AWS_ACCESS_KEY_ID="+f.Store.AccessKey, "AWS_SECRET_ACCESS_KEY="+f.Store.SecretKey,
		"OPENAI_COMPATIBLE_BASE_URL="+f.Model.URL, "OPENAI_COMPATIBLE_API=completions")
}

// NewHost makes a host named name with its own state directory (its tool
// journal, and the host id file the worker keeps beside it), log file and
// the given environment (nil: Env). args are added to the fleet's flags;
// with no -host-id in them the worker makes up its own id. It is not
// started.
func (f *Fleet) NewHost(name string, env []string, args ...string) *Host {
	state := filepath.Join(f.Dir, "hosts", name)
	if err := os.MkdirAll(state, 0o755); err != nil {
		f.T.Fatal(err)
	}
	if env == nil {
		env = f.Env()
	}
	h := &Host{
		ID:  name,
		Bin: f.Bin,
		Args: append([]string{"-address", f.Server.FrontendHostPort(), "-task-queue", f.Queue, "-store", f.Store.Spec,
			"-tool-journal", filepath.Join(state, "tool-journal"), "-workspace", f.Workspace, "-sandbox", "none"}, args...),
		Env:     env,
		LogPath: filepath.Join(f.Dir, name+".log"),
	}
	f.mu.Lock()
	f.hosts = append(f.hosts, h)
	f.mu.Unlock()
	return h
}

// AddHost makes and starts a host with host id id, and waits until it
// polls its host queue.
func (f *Fleet) AddHost(id string, env []string, args ...string) *Host {
	f.T.Helper()
	h := f.NewHost(id, env, append([]string{"-host-id", id}, args...)...)
	if err := h.Start(); err != nil {
		f.T.Fatal(err)
	}
	f.WaitPolled(agentapi.HostQueue(f.Queue, id), h, time.Minute)
	return h
}

// WaitPolled waits until host h's worker (any worker when h is nil) polls
// queue for activities.
func (f *Fleet) WaitPolled(queue string, h *Host, timeout time.Duration) {
	f.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := f.Client.DescribeTaskQueue(context.Background(), queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		for _, p := range resp.GetPollers() {
			// The SDK's default identity is pid@hostname@.
			if h == nil || strings.HasPrefix(p.GetIdentity(), fmt.Sprintf("%d@", h.Pid())) {
				return
			}
		}
		if time.Now().After(deadline) {
			f.T.Fatalf("no worker polled %s within %v (err %v)", queue, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WaitCurrent waits until the worker deployment has a current version, so
// that runs started now are dispatched.
func (f *Fleet) WaitCurrent(timeout time.Duration) {
	f.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		desc, err := f.Client.WorkerDeploymentClient().GetHandle(workflows.DeploymentName).Describe(context.Background(),
			client.WorkerDeploymentDescribeOptions{})
		if err == nil && desc.Info.RoutingConfig.CurrentVersion != nil {
			return
		}
		if time.Now().After(deadline) {
			f.T.Fatalf("the deployment has no current version after %v (err %v)", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *Fleet) stopHosts() {
	f.mu.Lock()
	hosts := slices.Clone(f.hosts)
	f.mu.Unlock()
	for _, h := range hosts {
		if h.Pid() != 0 && !h.Exited() {
			h.Stop(sigterm, 30*time.Second)
		}
		if f.T.Failed() {
			f.T.Logf("---- log of host %s (%s):\n%s", h.ID, h.LogPath, tail(h.Log(), 8000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("[... %d bytes]\n%s", len(s)-n, s[len(s)-n:])
}

// Main runs a package's tests and removes the worker binary afterwards.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
