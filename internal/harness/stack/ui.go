package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// UI is the Temporal Web UI's server of the stack.
type UI struct {
	URL string
	Log string
	p   *proc
}

// StartUI starts the Web UI on port for the server at address. It runs
// the UI server's own docker config (config/docker.yaml of its module, a
// template of environment variables, as the temporalio/ui image does) with
// the compose file's temporal-ui environment, the address and port set
// for this host.
func StartUI(ctx context.Context, bins Binaries, compose Compose, dir, address string, port int) (*UI, error) {
	if bins.UI == "" {
		return nil, fmt.Errorf("the Web UI server is not installed: GOBIN=$(go env GOPATH)/bin/%s go install %s", UIDir, UIModule)
	}
	mod := filepath.Join(bins.Modules, "github.com", "temporalio", "ui-server", "v2@v"+UIVersion)
	if _, err := os.Stat(filepath.Join(mod, "config", "docker.yaml")); err != nil {
		return nil, fmt.Errorf("the Web UI server's config is not in the module cache: %w", err)
	}
	u := &UI{URL: fmt.Sprintf("http://localhost:%d", port), Log: filepath.Join(dir, "ui.log")}
	cmd := exec.Command(bins.UI, "--root", mod, "--config", "config", "--env", "docker", "start")
	cmd.Env = os.Environ()
	for k, v := range compose.UIEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "TEMPORAL_ADDRESS="+address, fmt.Sprintf("TEMPORAL_UI_PORT=%d", port),
		"TEMPORAL_CORS_ORIGINS="+u.URL)
	p, err := startProc("temporal-ui", cmd, u.Log, filepath.Join(dir, "ui.pid"))
	if err != nil {
		return nil, err
	}
	u.p = p
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		resp, err := http.Get(u.URL + "/api/v1/settings")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return u, nil
			}
		}
		if !p.alive() {
			return nil, fmt.Errorf("the Web UI server exited: %s", logTail(u.Log))
		}
		select {
		case <-ctx.Done():
			_ = u.Stop()
			return nil, fmt.Errorf("the Web UI on %s does not answer: %v", u.URL, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop stops the Web UI's server.
func (u *UI) Stop() error {
	if u == nil || u.p == nil {
		return nil
	}
	return u.p.stop(syscall.SIGTERM, 10*time.Second)
}
