package llm

import (
	"bytes"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"
)

// A Chat Completions stream ends with "data: [DONE]". pi takes a stream
// that ended without a finish_reason for a complete answer (stopReason
// stop, with what it holds: nothing when the server sent usage only), and
// so does the workflow when the server said [DONE]: asking again would
// get the same answer. A stream that stopped before [DONE] was cut (a
// connection closed early reads the same to the SDK), and is retried.

// doneMarkers is the last event of a complete stream, as servers write it
// ("data: [DONE]", or without the space).
var doneMarkers = [][]byte{[]byte("data: [DONE]"), []byte("data:[DONE]")}

// doneWatch records whether the response body carried the end marker.
type doneWatch struct{ seen bool }

// watchDone wraps a successful response's body so that w learns whether
// the stream reached [DONE].
func watchDone(w *doneWatch) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode >= 400 {
			return res, err
		}
		res.Body = &doneReader{ReadCloser: res.Body, w: w}
		return res, nil
	}
}

// doneReader looks for the marker in what it reads, across reads: it keeps
// the end of the previous read, short of a marker's length.
type doneReader struct {
	io.ReadCloser
	w    *doneWatch
	tail []byte
}

func (r *doneReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n == 0 || r.w.seen {
		return n, err
	}
	keep := len(doneMarkers[0]) - 1
	// A marker split between reads is whole in the kept end and the
	// start of this read; any other is whole in this read.
	joint := append(r.tail, p[:min(n, keep)]...)
	for _, m := range doneMarkers {
		if bytes.Contains(joint, m) || bytes.Contains(p[:n], m) {
			r.w.seen = true
		}
	}
	if n >= keep {
		r.tail = append(r.tail[:0], p[n-keep:n]...)
	} else {
		r.tail = append(r.tail[:0], joint[max(0, len(joint)-keep):]...)
	}
	return n, err
}
