package s3server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/durable-agents/agentloop/internal/gobin"
)

// Module is the versitygw the project installs with `go install`.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// startTimeout bounds the wait for the server to answer; generous, since a
// loaded 2-core machine can take seconds to start it.
const startTimeout = time.Minute

// Server is a running versitygw. Tests may read the fields.
type Server struct {
	Endpoint  string // 127.0.0.1:port
	AccessKey string
	SecretKey string
	Bucket    string // created by Start
	Spec      string // for store.Open, with the credentials in AWS_* variables

	t       testing.TB
	bin     string
	data    string // the buckets
	meta    string // their metadata (a sidecar directory: no xattrs needed)
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// Start starts a server on a free loopback port with a fresh root
// directory, random credentials and a bucket, and stops it when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := t.TempDir()
	s := &Server{
		AccessKey: "ak" + randomHex(t, 8),
		SecretKey: randomHex(t, 20),
		Bucket:    "agentloop-test",
		t:         t,
		bin:       Binary(t),
		data:      filepath.Join(dir, "data"),
		meta:      filepath.Join(dir, "meta"),
		logPath:   filepath.Join(dir, "versitygw.log"),
	}
	for _, d := range []string{s.data, s.meta} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.Stop)
	// Another process can take the free port before versitygw binds it.
	var err error
	for range 3 {
		s.Endpoint = freePort(t)
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Spec = fmt.Sprintf("s3://%s?endpoint=%s&secure=false", s.Bucket, s.Endpoint)
	s.makeBucket()
	return s
}

// SetEnv puts the server's credentials in the test's AWS_* variables,
// where store.Open takes them from (they never go in the spec).
func (s *Server) SetEnv(t testing.TB) {
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
}

// Stop kills the server and waits for it to exit; the data stays.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again on the same port and directory.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) start() error {
	log, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(s.bin, "--port", s.Endpoint, "--quiet", "posix", "--sidecar", s.meta, s.data)
	// The credentials go in the environment, not the command line ps shows.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	if err := s.waitReady(); err != nil {
		s.Stop()
		out, _ := os.ReadFile(s.logPath)
		return fmt.Errorf("versitygw on %s: %w; its output:\n%s", s.Endpoint, err, out)
	}
	return nil
}

// waitReady polls until the server answers HTTP (any status: without a
// signature it says 403), it exits, or startTimeout passes.
func (s *Server) waitReady() error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return errors.New("exited before it answered")
		default:
		}
		if resp, err := client.Get("http://" + s.Endpoint + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer within %s", startTimeout)
}

func (s *Server) makeBucket() {
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{}); err != nil {
		s.t.Fatalf("create bucket %s: %v", s.Bucket, err)
	}
}

// Binary returns the versitygw to run: $VERSITYGW, else one on PATH or in
// the go install directory, else it installs Module (about 1.5 minutes the
// first time).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	bin := gobin.Dirs()[0] // where go install puts it
	p := filepath.Join(bin, "versitygw")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Logf("installing %s (about 1.5 minutes the first time)", Module)
	if out, err := exec.Command("go", "install", Module).CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", Module, err, out)
	}
	return p
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
