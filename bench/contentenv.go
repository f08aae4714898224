package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/store"
)

// contentEnv is what the content benchmark's modes share: a Temporal
// server, the model server, the worker binary and a temporary directory
// for workspaces, tool journals and worker logs. Every worker and the
// benchmark's own reads use one content store (benchStoreDir).
type contentEnv struct {
	c        client.Client
	address  string
	srv      *devserver.Server
	model    *contentModel
	dir      string
	storeDir string
	st       *store.Store
	bin      string // the real worker binary, once built
	failed   bool   // keep dir for a look at the worker logs
	ownStore bool   // the store directory is this process's to remove
}

func newContentEnv(ctx context.Context) (*contentEnv, error) {
	e := &contentEnv{ownStore: os.Getenv("AGENTLOOP_BENCH_STORE") == ""}
	e.storeDir, e.st = benchStoreDir(), benchStore()
	var err error
	if e.dir, err = os.MkdirTemp("", "agentloop-bench-content-"); err != nil {
		return nil, err
	}
	if e.model, err = startContentModel(); err != nil {
		return nil, err
	}
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		if e.c, err = client.Dial(client.Options{HostPort: addr, Logger: quiet()}); err != nil {
			return nil, err
		}
		e.address = addr
		return e, nil
	}
	if e.srv, err = startDevServer(ctx, nil); err != nil {
		return nil, err
	}
	e.c, e.address = e.srv.Client(), e.srv.FrontendHostPort()
	return e, nil
}

func (e *contentEnv) close() {
	e.model.close()
	if e.srv != nil {
		_ = e.srv.Stop()
	} else if e.c != nil {
		e.c.Close()
	}
	if e.failed {
		fmt.Printf("worker logs and workspaces kept in %s, content in %s\n", e.dir, e.storeDir)
		return
	}
	_ = os.RemoveAll(e.dir)
	if e.ownStore {
		_ = os.RemoveAll(e.storeDir)
	}
}

// buildWorker builds the real worker binary (./worker) once.
func (e *contentEnv) buildWorker(ctx context.Context) (string, error) {
	if e.bin != "" {
		return e.bin, nil
	}
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	bin := filepath.Join(e.dir, "worker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./worker")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./worker: %w\n%s", err, out)
	}
	e.bin = bin
	return bin, nil
}

// startRealWorker starts the worker binary on queue, as a user would
// start it: its own content store flag, a workspace, and the model server
// as its OpenAI-compatible provider.
func (e *contentEnv) startRealWorker(ctx context.Context, queue string) (*workerProc, error) {
	bin, err := e.buildWorker(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := os.MkdirTemp(e.dir, "workspace-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-address", e.address, "-task-queue", queue, "-store", e.storeDir,
		"-workspace", ws, "-tool-journal", filepath.Join(e.dir, "journal-"+queue), "-log-level", "warn")
	return e.startProc(cmd, queue)
}

// startBenchWorker starts this binary's contentworker subcommand on queue.
func (e *contentEnv) startBenchWorker(queue string, args ...string) (*workerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ws, err := os.MkdirTemp(e.dir, "workspace-")
	if err != nil {
		return nil, err
	}
	args = append([]string{"contentworker", "-address", e.address, "-queue", queue, "-workspace", ws}, args...)
	return e.startProc(exec.Command(self, args...), queue)
}

func (e *contentEnv) startProc(cmd *exec.Cmd, queue string) (*workerProc, error) {
	logPath := filepath.Join(e.dir, "worker-"+queue+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(),
		"OPENAI_COMPATIBLE_BASE_URL="+e.model.url,
		"OPENAI_COMPATIBLE_API=completions",
		"AGENTLOOP_BENCH_STORE="+e.storeDir)
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &workerProc{cmd: cmd, log: logPath, done: make(chan struct{}), stopSampling: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	go p.sample()
	return p, nil
}

// workerProc is a running worker process, its memory sampled every second.
type workerProc struct {
	cmd          *exec.Cmd
	log          string
	done         chan struct{} // closed when the process has exited
	err          error
	stopSampling chan struct{}

	mu      sync.Mutex
	peakRSS int64 // largest VmRSS sampled, bytes
	hwm     int64 // the kernel's VmHWM at the last sample, bytes
	samples int
}

func (p *workerProc) sample() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		p.read()
		select {
		case <-p.done:
			return
		case <-p.stopSampling:
			return
		case <-t.C:
		}
	}
}

func (p *workerProc) read() {
	rss, hwm, ok := procMemory(p.cmd.Process.Pid)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peakRSS, p.hwm = max(p.peakRSS, rss), max(p.hwm, hwm)
	p.samples++
}

// memory returns the largest VmRSS sampled and the peak the kernel
// recorded (VmHWM), reading once more first.
func (p *workerProc) memory() (peakRSS, hwm int64, samples int) {
	p.read()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakRSS, p.hwm, p.samples
}

// exited reports an error when the process is gone.
func (p *workerProc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("worker process exited (%v); log: %s", p.err, p.log)
	default:
		return nil
	}
}

func (p *workerProc) stop() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	select {
	case <-p.stopSampling:
	default:
		close(p.stopSampling)
	}
}

// procMemory reads VmRSS and VmHWM of a process, in bytes.
func procMemory(pid int) (rss, hwm int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, v, found := strings.Cut(l, ":")
		if !found {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm, hwm > 0
}
