package otlpsink

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its ids in hex as tracing UIs show them.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Attributes                map[string]any
}

// Sink is a running receiver.
type Sink struct {
	// Endpoint is the base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
}

// Start starts a receiver on loopback.
func Start() *Sink {
	s := &Sink{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", s.traces)
	s.srv = httptest.NewServer(mux)
	s.Endpoint = s.srv.URL
	return s
}

// Close stops the receiver.
func (s *Sink) Close() { s.srv.Close() }

// Spans returns the spans received so far.
func (s *Sink) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

func (s *Sink) traces(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				got = append(got, Span{
					TraceID:    hex.EncodeToString(sp.TraceId),
					SpanID:     hex.EncodeToString(sp.SpanId),
					ParentID:   hex.EncodeToString(sp.ParentSpanId),
					Name:       sp.Name,
					Attributes: attributes(sp.Attributes),
				})
			}
		}
	}
	s.mu.Lock()
	s.spans = append(s.spans, got...)
	s.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attributes(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = v.BoolValue
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}
