package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Postgres is a PostgreSQL server of the stack, on loopback only, with its
// cluster in Dir/data, its log in Dir/postgres.log.
type Postgres struct {
	Dir      string
	Port     int
	User     string
	Password string
	bins     Binaries
	p        *proc
}

// StartPostgres starts PostgreSQL on port with its cluster under dir,
// creating the cluster (initdb) the first time with user as its superuser,
// who logs in with password as in the compose file's postgresql service.
// As root it runs PostgreSQL as the postgres user, which owns the cluster.
func StartPostgres(ctx context.Context, bins Binaries, dir string, port int, user, password string) (*Postgres, error) {
	pg := &Postgres{Dir: dir, Port: port, User: user, Password: password, bins: bins}
	if p := readProc("postgresql", pg.pidFile()); p != nil {
		return nil, fmt.Errorf("PostgreSQL of %s is already running (pid %d)", dir, p.pid)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := reachable(dir); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		if err := pg.initdb(ctx, data); err != nil {
			return nil, err
		}
	}
	// No Unix socket: every client, the server included, connects over
	// TCP to 127.0.0.1, as it would to a database host.
	cmd := exec.Command(filepath.Join(bins.Postgres, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		// A Temporal server opens up to 30 connections (20 to its
		// database, 10 to visibility); tests run several servers.
		"-c", "max_connections=400")
	if _, _, err := runAs(cmd); err != nil {
		return nil, err
	}
	p, err := startProc("postgresql", cmd, filepath.Join(dir, "postgres.log"), pg.pidFile())
	if err != nil {
		return nil, err
	}
	pg.p = p
	if err := pg.waitReady(ctx); err != nil {
		_ = pg.Stop()
		return nil, err
	}
	return pg, nil
}

func (pg *Postgres) pidFile() string { return filepath.Join(pg.Dir, "postgres.pid") }

func (pg *Postgres) initdb(ctx context.Context, data string) error {
	pw := filepath.Join(pg.Dir, "initdb-password")
	if err := os.WriteFile(pw, []byte(pg.Password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pw)
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(pg.bins.Postgres, "initdb"), "-D", data, "-U", pg.User,
		"--pwfile", pw, "--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--no-locale")
	uid, gid, err := runAs(cmd)
	if err != nil {
		return err
	}
	for _, p := range []string{pw, data} {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// waitReady waits until PostgreSQL accepts connections.
func (pg *Postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := exec.CommandContext(ctx, filepath.Join(pg.bins.Postgres, "pg_isready"),
			"-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", pg.User, "-q").Run()
		if err == nil {
			return nil
		}
		if !pg.p.alive() {
			return fmt.Errorf("PostgreSQL exited; see %s", filepath.Join(pg.Dir, "postgres.log"))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL not ready on port %d: %w", pg.Port, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops PostgreSQL with a fast shutdown (SIGINT: sessions are ended,
// the data is flushed).
func (pg *Postgres) Stop() error {
	if pg.p == nil {
		return nil
	}
	return pg.p.stop(syscall.SIGINT, 30*time.Second)
}

// SetupDatabase creates a database of Temporal's as the auto-setup image
// does: create it, set up schema versioning (-v 0.0), and bring it to the
// newest schema of kind ("temporal" or "visibility") from the server's
// versioned schema. A database set up before is only updated.
func (pg *Postgres) SetupDatabase(ctx context.Context, plugin, name, kind string) error {
	mod, err := pg.bins.serverModuleDir()
	if err != nil {
		return err
	}
	done := filepath.Join(pg.Dir, "schema-"+name+".done")
	var steps [][]string
	if _, err := os.Stat(done); err != nil {
		steps = append(steps, []string{"create-database"}, []string{"setup-schema", "-v", "0.0"})
	}
	steps = append(steps, []string{"update-schema", "-d", filepath.Join(mod, "schema", "postgresql", "v12", kind, "versioned")})
	for _, step := range steps {
		args := append([]string{"--plugin", plugin, "--ep", "127.0.0.1", "-p", strconv.Itoa(pg.Port),
			"-u", pg.User, "--pw", pg.Password, "--db", name}, step...)
		if out, err := exec.CommandContext(ctx, pg.bins.SQLTool, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("temporal-sql-tool %s of %s: %w\n%s", step[0], name, err, tail(out, 2000))
		}
	}
	return os.WriteFile(done, nil, 0o644)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
