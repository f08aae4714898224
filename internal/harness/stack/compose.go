package stack

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	agentloop "github.com/durable-agents/agentloop"
)

// Compose is what the stack takes from docker-compose.yml: the temporal
// service's environment, from which the server's config is rendered, and
// the UI's.
type Compose struct {
	ServerImage string
	ServerEnv   map[string]string
	UIImage     string
	UIEnv       map[string]string
}

// LoadCompose reads the compose file this package was built with.
func LoadCompose() (Compose, error) {
	return ParseCompose(agentloop.ComposeFile)
}

// ParseCompose reads the temporal and temporal-ui services of a compose
// file.
func ParseCompose(b []byte) (Compose, error) {
	var f struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return Compose{}, fmt.Errorf("docker-compose.yml: %w", err)
	}
	s, ok := f.Services["temporal"]
	if !ok {
		return Compose{}, fmt.Errorf("docker-compose.yml has no temporal service")
	}
	ui := f.Services["temporal-ui"]
	return Compose{ServerImage: s.Image, ServerEnv: s.Environment, UIImage: ui.Image, UIEnv: ui.Environment}, nil
}

// Env returns the value of a variable of the temporal service, or def.
func (c Compose) Env(name, def string) string {
	if v := c.ServerEnv[name]; v != "" {
		return v
	}
	return def
}

// HostOverrides are the only variables the stack sets differently from the
// compose file: where things are on this host (addresses, ports, the
// dynamic config's path), and the database names for tests that start
// several servers on one PostgreSQL. Everything else comes from the
// compose file.
var HostOverrides = []string{
	"POSTGRES_SEEDS", "DB_PORT", "BIND_ON_IP", "TEMPORAL_BROADCAST_ADDRESS",
	"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT",
	"HISTORY_GRPC_PORT", "HISTORY_MEMBERSHIP_PORT", "MATCHING_GRPC_PORT", "MATCHING_MEMBERSHIP_PORT",
	"WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT", "PROMETHEUS_ENDPOINT", "PPROF_PORT",
	"DYNAMIC_CONFIG_FILE_PATH", "DBNAME", "VISIBILITY_DBNAME",
}

// renderConfig renders the server's docker config template (the one the
// auto-setup image renders with dockerize at start) with the compose
// environment and the host's overrides.
func renderConfig(templatePath string, c Compose, overrides map[string]string) ([]byte, error) {
	env := map[string]string{}
	maps.Copy(env, c.ServerEnv)
	for k, v := range overrides {
		if !isOverride(k) {
			return nil, fmt.Errorf("the stack may not override %s: it comes from docker-compose.yml", k)
		}
		env[k] = v
	}
	src, err := os.ReadFile(templatePath)
	if err != nil {
		return nil, err
	}
	// As dockerize: an unset variable is empty.
	t, err := template.New(filepath.Base(templatePath)).Funcs(dockerizeFuncs).Option("missingkey=zero").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", templatePath, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, map[string]any{"Env": env}); err != nil {
		return nil, fmt.Errorf("render %s: %w", templatePath, err)
	}
	return out.Bytes(), nil
}

func isOverride(name string) bool {
	for _, o := range HostOverrides {
		if o == name {
			return true
		}
	}
	return false
}

// dockerizeFuncs are the template functions of dockerize that the
// server's template uses, with dockerize's meaning.
var dockerizeFuncs = template.FuncMap{
	// default returns the value, or def when the value is empty.
	"default": func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	},
	"lower": strings.ToLower,
	"split": strings.Split,
	"trim":  strings.TrimSpace,
}
