package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// WorkerBinEnv names a worker binary built once for every test package
// that runs the real worker as a separate process (scripts/test sets it):
// linking the worker takes 10-15 CPU-seconds each time.
const WorkerBinEnv = "AGENTLOOP_WORKER_BIN"

// WorkerBin returns the real worker binary: $AGENTLOOP_WORKER_BIN when
// set, else ./worker of this module built into dir. Beside it, as a
// deployment installs them, is agentloop-netbridge (./netbridge), which
// network-on commands start in their empty network namespace.
func WorkerBin(dir string) (string, error) {
	if bin := os.Getenv(WorkerBinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", WorkerBinEnv, err)
		}
		return bin, nil
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	bin := filepath.Join(dir, "worker")
	cmd := exec.Command("go", "build", "-o", bin, "./worker")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./worker: %w\n%s", err, out)
	}
	nb := exec.Command("go", "build", "-o", filepath.Join(dir, "agentloop-netbridge"), "./netbridge")
	nb.Dir = cmd.Dir
	nb.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as the Dockerfile builds it
	if out, err := nb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./netbridge: %w\n%s", err, out)
	}
	return bin, nil
}
