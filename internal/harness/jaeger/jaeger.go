package jaeger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/durable-agents/agentloop/internal/gobin"
)

// DirName is the directory under GOBIN that scripts/lib.sh installs the
// binary into.
const DirName = "jaeger-1.75.0"

// Find returns the Jaeger binary: $JAEGER, jaeger-1.75.0/jaeger in a go
// install directory (gobin.Dirs), or jaeger on PATH.
func Find() (string, error) {
	if p := os.Getenv("JAEGER"); p != "" {
		return p, nil
	}
	for _, d := range gobin.Dirs() {
		p := filepath.Join(d, DirName, "jaeger")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p, nil
	}
	return "", errors.New("no Jaeger binary: set JAEGER, or install it with scripts/lib.sh's jaeger_bin (go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@v1.75.0)")
}

// Jaeger is a running Jaeger process.
type Jaeger struct {
	// OTLPEndpoint is the OTLP/HTTP receiver, for
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLPEndpoint string
	// QueryURL is the query API and UI.
	QueryURL string
	cmd      *exec.Cmd
	done     chan error
}

const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memory:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memory
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory
`

// Start starts Jaeger with in-memory storage on free loopback ports and
// waits until its query API answers; log receives its output.
func Start(ctx context.Context, bin, dir string, log io.Writer) (*Jaeger, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, config, ports[0], ports[1], ports[2]), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	j := &Jaeger{
		OTLPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", ports[2]),
		QueryURL:     fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		cmd:          cmd,
		done:         make(chan error, 1),
	}
	go func() { j.done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := j.Services(ctx); err == nil {
			return j, nil
		}
		select {
		case err := <-j.done:
			return nil, fmt.Errorf("jaeger exited: %v", err)
		case <-ctx.Done():
			j.Stop()
			return nil, fmt.Errorf("jaeger did not answer at %s: %w", j.QueryURL, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop ends the process.
func (j *Jaeger) Stop() {
	_ = j.cmd.Process.Kill()
	<-j.done
	j.done <- nil
}

// Services lists the services Jaeger has spans of.
func (j *Jaeger) Services(ctx context.Context) ([]string, error) {
	var out struct {
		Data []string `json:"data"`
	}
	err := j.get(ctx, "/api/services", &out)
	return out.Data, err
}

// Trace is a trace as Jaeger's query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []KeyValue  `json:"tags"`
	ProcessID     string      `json:"processID"`
}

// Parent is the span's CHILD_OF reference, or "".
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag returns a tag's value.
func (s Span) Tag(key string) (any, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

// Reference links spans.
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is a tag.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Process is the service that sent spans.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// Traces returns the traces of a service (at most limit).
func (j *Jaeger) Traces(ctx context.Context, service string, limit int) ([]Trace, error) {
	var out struct {
		Data []Trace `json:"data"`
	}
	err := j.get(ctx, fmt.Sprintf("/api/traces?service=%s&limit=%d&lookback=1h", service, limit), &out)
	return out.Data, err
}

// Trace returns one trace by ID.
func (j *Jaeger) Trace(ctx context.Context, id string) (Trace, error) {
	var out struct {
		Data []Trace `json:"data"`
	}
	if err := j.get(ctx, "/api/traces/"+id, &out); err != nil {
		return Trace{}, err
	}
	if len(out.Data) != 1 {
		return Trace{}, fmt.Errorf("trace %s: %d traces", id, len(out.Data))
	}
	return out.Data[0], nil
}

func (j *Jaeger) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.QueryURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
