package sandbox

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/internal/secretenv"
)

// systemPaths are what commands may read (and run programs from): the
// programs, libraries and configuration of the system. Nothing that holds
// users' or services' data is among them: /home, /root, /var, /srv, /run,
// /mnt and /media are never mounted.
var systemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// rootOnlyFiles are system files only root may read. A worker running as
// root runs its commands as root too (without capabilities), which would
// read them; they are hidden whoever the worker runs as.
var rootOnlyFiles = []string{"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d"}

// homeSecrets are the credential directories and files in a home
// directory, hidden also when the workspace is the home itself.
var homeSecrets = []string{
	".local/state/agentloop", ".config/temporalio", ".config/agentloop", ".ssh", ".aws", ".config/gcloud",
	".docker", ".kube", ".netrc", ".git-credentials", ".gnupg",
}

// DefaultHide lists what commands must never see on this machine: the
// worker's home and the secrets in it, every file a secret-naming
// variable names (secretenv.FileVars: codec keys, Temporal TLS files and
// profile, cloud credentials), and root-only system files. The worker
// adds its state directories when they are elsewhere.
func DefaultHide(getenv func(string) string) []string {
	hide := slices.Clone(rootOnlyFiles)
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		hide = append(hide, home)
		for _, s := range homeSecrets {
			hide = append(hide, filepath.Join(home, s))
		}
	}
	for _, v := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME"} {
		if dir := getenv(v); dir != "" {
			hide = append(hide, filepath.Join(dir, "agentloop"), filepath.Join(dir, "temporalio"))
		}
	}
	return append(hide, secretenv.Files(getenv)...)
}

// systemDirs returns the system paths that exist here.
func systemDirs() []string {
	var dirs []string
	for _, p := range systemPaths {
		if _, err := os.Lstat(p); err == nil {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// existing returns the paths that exist, absolute and with symlinks
// resolved (what a mount or a Landlock rule applies to), without
// duplicates.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if abs, err := filepath.Abs(real); err == nil && !slices.Contains(out, abs) {
				out = append(out, abs)
			}
		}
	}
	return out
}

// realDir is dir absolute and with symlinks resolved: what bwrap mounts
// and Landlock grants.
func realDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// hiddenWithin returns the hidden paths strictly inside dir that do not
// contain ws: a hidden directory holding the workspace (the worker's home
// when runs work in it) stays, since the run asked for that directory;
// the secrets inside it are hidden one by one.
func (s *Sandbox) hiddenWithin(dir, ws string) []string {
	var out []string
	for _, h := range s.hidden {
		if h != dir && within(h, dir) && !within(ws, h) {
			out = append(out, h)
		}
	}
	return out
}

// isHidden reports whether path is hidden or inside a hidden directory.
func (s *Sandbox) isHidden(path string) bool {
	return slices.ContainsFunc(s.hidden, func(h string) bool { return within(path, h) })
}

// visiblePath is the worker's PATH without the directories commands cannot
// read (its home's, say): under Landlock they still exist, and a program
// found there first would fail with "Permission denied" instead of being
// looked up further along.
func (s *Sandbox) visiblePath() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		visible := slices.ContainsFunc(s.system, func(sys string) bool { return within(dir, sys) })
		if visible && !s.isHidden(dir) && !slices.Contains(keep, dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, ":")
}

// Environment is what a command starts with: nothing of the worker's
// except LANG, LC_ALL, TERM, TZ and the visible part of PATH, plus HOME and
// TMPDIR in its private directories, the proxy when it has network, and
// the run's own variables (spec.Env), which may override any of these.
func (s *Sandbox) environment(spec Spec, home, tmp, proxyURL string) []string {
	env := map[string]string{
		"PATH":   "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME":   home,
		"TMPDIR": tmp,
		"LANG":   "C.UTF-8",
	}
	if path := s.visiblePath(); path != "" {
		env["PATH"] = path
	}
	for _, name := range []string{"LANG", "LC_ALL", "TERM", "TZ"} {
		if v := os.Getenv(name); v != "" {
			env[name] = v
		}
	}
	if proxyURL != "" {
		for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			env[name] = proxyURL
		}
	}
	maps.Copy(env, spec.Env)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnv refuses variables a process environment cannot hold.
func checkEnv(env map[string]string) error {
	for k, v := range env {
		if !envName.MatchString(k) {
			return fmt.Errorf("sandbox env: %q is not a variable name", k)
		}
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("sandbox env: %s holds a NUL byte", k)
		}
	}
	return nil
}
