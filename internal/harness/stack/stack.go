package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Options configure a stack.
type Options struct {
	// Dir holds everything: PostgreSQL's cluster, the server's config,
	// logs and pid files.
	Dir string
	// PostgresPort is PostgreSQL's port (DefaultPostgresPort when 0).
	PostgresPort int
	// Ports are the server's (DefaultPorts when zero).
	Ports Ports
	// UIPort starts the Web UI on this port; 0 starts none.
	UIPort int
}

// DefaultPostgresPort is not PostgreSQL's usual 5432, which a system
// cluster may hold.
const DefaultPostgresPort = 15432

// Stack is a running stack.
type Stack struct {
	Dir      string
	Postgres *Postgres
	Server   *Server
	UI       *UI // nil without Options.UIPort
}

// Up starts PostgreSQL, sets up the databases, starts the server and
// registers the namespace and search attributes, then the Web UI.
func Up(ctx context.Context, o Options) (*Stack, error) {
	bins, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	compose, err := LoadCompose()
	if err != nil {
		return nil, err
	}
	if o.PostgresPort == 0 {
		o.PostgresPort = DefaultPostgresPort
	}
	if o.Ports == (Ports{}) {
		o.Ports = DefaultPorts()
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := reachable(dir); err != nil {
		return nil, err
	}
	s := &Stack{Dir: dir}
	pg, err := StartPostgres(ctx, bins, filepath.Join(dir, "postgresql"), o.PostgresPort,
		compose.Env("POSTGRES_USER", "temporal"), compose.Env("POSTGRES_PWD", "temporal"))
	if err != nil {
		return nil, err
	}
	s.Postgres = pg
	s.Server, err = StartServer(ctx, bins, compose, ServerOptions{Dir: filepath.Join(dir, "temporal"), Ports: o.Ports, Postgres: pg})
	if err != nil {
		_ = s.Down()
		return nil, err
	}
	if o.UIPort != 0 {
		s.UI, err = StartUI(ctx, bins, compose, filepath.Join(dir, "temporal"), s.Server.Address, o.UIPort)
		if err != nil {
			_ = s.Down()
			return nil, err
		}
	}
	return s, nil
}

// Down stops the Web UI, the server and PostgreSQL, in that order.
func (s *Stack) Down() error {
	var errs []error
	if s.UI != nil {
		errs = append(errs, s.UI.Stop())
	}
	if s.Server != nil {
		errs = append(errs, s.Server.Stop())
	}
	if s.Postgres != nil {
		errs = append(errs, s.Postgres.Stop())
	}
	return errors.Join(errs...)
}

// components are the processes of a stack directory, in the order they
// stop, with the signal that stops each gracefully.
var components = []struct {
	name, pidFile string
	sig           syscall.Signal
}{
	{"temporal-ui", "temporal/ui.pid", syscall.SIGTERM},
	{"temporal-server", "temporal/temporal-server.pid", syscall.SIGTERM},
	{"postgresql", "postgresql/postgres.pid", syscall.SIGINT},
}

// DownDir stops the processes a stack in dir left running (`stack up` in
// another process), from their pid files.
func DownDir(dir string) error {
	var errs []error
	for _, c := range components {
		if p := readProc(c.name, filepath.Join(dir, c.pidFile)); p != nil {
			errs = append(errs, p.stop(c.sig, 30*time.Second))
		}
	}
	return errors.Join(errs...)
}

// StatusDir describes the processes of the stack in dir.
func StatusDir(dir string) string {
	var b strings.Builder
	for _, c := range components {
		if p := readProc(c.name, filepath.Join(dir, c.pidFile)); p != nil {
			fmt.Fprintf(&b, "%-16s running (pid %d)\n", c.name, p.pid)
		} else {
			fmt.Fprintf(&b, "%-16s stopped\n", c.name)
		}
	}
	return b.String()
}

// Running reports whether any process of the stack in dir runs.
func Running(dir string) bool {
	for _, c := range components {
		if readProc(c.name, filepath.Join(dir, c.pidFile)) != nil {
			return true
		}
	}
	return false
}
