package gobin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Dirs are the directories `go install` puts binaries in, the one it uses
// now first: GOBIN, else each GOPATH entry's bin, then ~/go/bin.
func Dirs() []string {
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		// One line each, GOBIN's empty when unset: trimming the whole
		// output first would take GOPATH for GOBIN.
		lines := strings.Split(string(out), "\n")
		if gobin := strings.TrimSpace(lines[0]); gobin != "" {
			dirs = append(dirs, gobin)
		}
		if len(lines) > 1 {
			for _, p := range filepath.SplitList(strings.TrimSpace(lines[1])) {
				dirs = append(dirs, filepath.Join(p, "bin"))
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	return dirs
}
