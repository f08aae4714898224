package stack

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Versions of what the stack runs: the tags of the compose file's images
// (compose_test.go keeps them equal) built from source by scripts/lib.sh.
const (
	ServerVersion = "1.29.1"
	UIVersion     = "2.42.1"
	// ServerModule and SQLToolModule are Temporal's server and its schema
	// tool (temporal-sql-tool); UIModule is the Web UI's server, which
	// embeds the UI. scripts/lib.sh installs them.
	ServerModule  = "go.temporal.io/server/cmd/server@v" + ServerVersion
	SQLToolModule = "go.temporal.io/server/cmd/tools/sql@v" + ServerVersion
	UIModule      = "github.com/temporalio/ui-server/v2/cmd/server@v" + UIVersion
	// ServerDir and UIDir are the directories under GOBIN they are
	// installed in: both modules name their binary "server".
	ServerDir = "temporal-server-" + ServerVersion
	UIDir     = "temporal-ui-server-" + UIVersion
)

// Binaries are the programs the stack runs.
type Binaries struct {
	Server  string // Temporal's server
	SQLTool string // temporal-sql-tool
	UI      string // the Web UI server; empty when not installed
	// Postgres is the directory of PostgreSQL's initdb and postgres.
	Postgres string
	// Modules is the Go module cache, where the server's schema and
	// config template are.
	Modules string
}

// FindBinaries finds the installed binaries: $TEMPORAL_SERVER,
// $TEMPORAL_SQL_TOOL, $TEMPORAL_UI_SERVER and $POSTGRES_BIN when set,
// else the go install directory (ServerDir, UIDir) and Debian's
// /usr/lib/postgresql/VERSION/bin. It never installs anything: the error
// says what to run.
func FindBinaries() (Binaries, error) {
	var b Binaries
	gobin, modcache := goDirs()
	b.Modules = modcache
	b.Server = find("TEMPORAL_SERVER", filepath.Join(gobin, ServerDir, "server"))
	b.SQLTool = find("TEMPORAL_SQL_TOOL", filepath.Join(gobin, ServerDir, "sql"))
	b.UI = find("TEMPORAL_UI_SERVER", filepath.Join(gobin, UIDir, "server"))
	b.Postgres = postgresBin()
	var missing []string
	if b.Server == "" || b.SQLTool == "" {
		missing = append(missing, fmt.Sprintf("Temporal's server: GOBIN=%s go install %s %s",
			filepath.Join(gobin, ServerDir), ServerModule, SQLToolModule))
	}
	if b.Postgres == "" {
		missing = append(missing, "PostgreSQL: apt-get install postgresql")
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("the stack needs %s (scripts/stack installs them)", strings.Join(missing, "; "))
	}
	return b, nil
}

func find(env, path string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return path
	}
	return ""
}

// goDirs returns where go install puts binaries and the module cache.
func goDirs() (gobin, modcache string) {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH", "GOMODCACHE").Output()
	if err != nil {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, "go", "bin"), filepath.Join(home, "go", "pkg", "mod")
	}
	// One line each, GOBIN usually empty: the output is not trimmed.
	lines := strings.Split(string(out), "\n")
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	gobin = strings.TrimSpace(lines[0])
	if gobin == "" {
		gobin = filepath.Join(filepath.SplitList(strings.TrimSpace(lines[1]))[0], "bin")
	}
	return gobin, strings.TrimSpace(lines[2])
}

// postgresBin is $POSTGRES_BIN, the newest of Debian's
// /usr/lib/postgresql/*/bin, or the directory of initdb on PATH.
func postgresBin() string {
	if p := os.Getenv("POSTGRES_BIN"); p != "" {
		return p
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Compare(version(a), version(b)) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// version is the major version in /usr/lib/postgresql/N/bin.
func version(dir string) int {
	n := 0
	fmt.Sscanf(filepath.Base(filepath.Dir(dir)), "%d", &n)
	return n
}

// serverModuleDir is the server's module source in the module cache: the
// schema tool's versioned schema and the server's docker config template
// are read from it, as the auto-setup image reads its copies.
func (b Binaries) serverModuleDir() (string, error) {
	dir := filepath.Join(b.Modules, "go.temporal.io", "server@v"+ServerVersion)
	if _, err := os.Stat(filepath.Join(dir, "docker", "config_template.yaml")); err != nil {
		return "", fmt.Errorf("Temporal's server source is not in the module cache (%s): go mod download go.temporal.io/server@v%s", dir, ServerVersion)
	}
	return dir, nil
}
