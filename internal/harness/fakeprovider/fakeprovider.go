package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Reply is one scripted HTTP answer. A zero Status is a 200 event stream;
// any other status is sent as JSON.
type Reply struct {
	Status int
	Header map[string]string
	// Body is sent as is; Fixture names a file in the test's testdata
	// directory to send instead.
	Body    string
	Fixture string
	// CutAfter, when positive, sends that many bytes of the body and then
	// drops the connection, as a network failure mid-stream does.
	CutAfter int
	// Hold keeps the stream open after the body until the client goes away.
	Hold bool
	// Events, when set, are sent one per Interval (a slow stream); the
	// handler stops when the client goes away.
	Events   []string
	Interval time.Duration
}

// Request is one call the server got.
type Request struct {
	At     time.Time
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any // Raw decoded, when it is a JSON object
}

// Server is the fake provider.
type Server struct {
	URL string
	// Always answers every call once the scripted replies run out; nil
	// makes such a call a test error.
	Always *Reply
	// Next, when set, answers a call the scripted replies do not, before
	// Always: it sees the request (the conversation so far), for a reply
	// that depends on a tool's result, as a model's would. It runs
	// under the server's lock: it must not call the Server's methods.
	Next func(Request) Reply

	t         testing.TB
	mu        sync.Mutex
	down      *Reply // answers every call until downUntil
	downUntil time.Time
	replies   []Reply
	reqs      []Request
	// sent counts the events slow streams wrote; gone is closed when a
	// slow stream's client went away before the end.
	sent     atomic.Int32
	gone     chan struct{}
	goneOnce sync.Once
}

// New starts a server with the given replies; it stops with the test.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{t: t, replies: replies, gone: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Add scripts more replies.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// GoDown answers every call with rep for d from now, before any scripted
// reply: a provider outage of a known length. The calls are recorded.
func (s *Server) GoDown(rep Reply, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down, s.downUntil = &rep, time.Now().Add(d)
}

// Requests returns the calls so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Sent is how many events slow streams have written.
func (s *Server) Sent() int { return int(s.sent.Load()) }

// Gone is closed when a slow stream's client went away before its end.
func (s *Server) Gone() <-chan struct{} { return s.gone }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw := new(bytes.Buffer)
	_, _ = raw.ReadFrom(r.Body)
	req := Request{At: time.Now(), Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw.Bytes()}
	_ = json.Unmarshal(req.Raw, &req.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var rep Reply
	switch {
	case s.down != nil && req.At.Before(s.downUntil):
		rep = *s.down
	case len(s.replies) > 0:
		rep, s.replies = s.replies[0], s.replies[1:]
	case s.Next != nil:
		rep = s.Next(req)
	case s.Always != nil:
		rep = *s.Always
	default:
		n := len(s.reqs)
		s.mu.Unlock()
		s.t.Errorf("unscripted call %d to %s", n, r.URL.Path)
		http.Error(w, `{"error":{"message":"no reply scripted","type":"test"}}`, http.StatusTeapot)
		return
	}
	s.mu.Unlock()

	data := []byte(rep.Body)
	if rep.Fixture != "" {
		data = Fixture(s.t, rep.Fixture)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	switch {
	case rep.CutAfter > 0:
		s.cut(w, data[:rep.CutAfter])
	case rep.Events != nil:
		s.slow(w, r, rep)
	default:
		_, _ = w.Write(data)
		if rep.Hold {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}
}

// cut writes part of a chunked response and closes the connection without
// the terminating chunk.
func (s *Server) cut(w http.ResponseWriter, part []byte) {
	_, _ = w.Write(part)
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		s.t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// slow writes one event per interval until the end or the client leaves.
func (s *Server) slow(w http.ResponseWriter, r *http.Request, rep Reply) {
	for _, ev := range rep.Events {
		if _, err := w.Write([]byte(ev)); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		s.sent.Add(1)
		select {
		case <-r.Context().Done():
			s.goneOnce.Do(func() { close(s.gone) })
			return
		case <-time.After(rep.Interval):
		}
	}
}

// Fixture reads a file of the test's testdata directory.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ContentText is the text of a Chat Completions message's content, which
// is a string or a list of parts whose texts it joins.
func ContentText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
