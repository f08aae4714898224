package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// failedResponse is an HTTP error response as it arrived. OpenAI-compatible
// servers do not all write OpenAI's error JSON ({"error": "text"} from
// some, plain text from proxies), and the SDK then returns a decoding error
// without the status; keeping the response lets every failure be
// classified by its status.
type failedResponse struct {
	status int
	header http.Header
	body   []byte
}

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 64 << 10

// captureFailure returns a middleware that records an error response in
// into and hands the SDK an unread copy of its body.
func captureFailure(into *failedResponse) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < 400 {
			return res, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		*into = failedResponse{status: res.StatusCode, header: res.Header, body: body}
		return res, nil
	}
}

// classifyOpenAI classifies a failed call: an HTTP error (from resp when the
// SDK could not decode it), an error object inside the stream, or a
// network failure.
func classifyOpenAI(err error, resp *failedResponse) *Error {
	if e, ok := AsError(err); ok {
		return e
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		return classifyStatus(apiErr.StatusCode, header, apiErr.Message, apiErr.Code+" "+apiErr.Type)
	}
	if resp != nil && resp.status != 0 {
		message, code := errorText(resp.body)
		return classifyStatus(resp.status, resp.header, message, code)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return classifyStreamError(streamErr.Event.Data)
	}
	return networkError(err)
}

// openAIErrorJSON is the error object of OpenAI and of the servers that
// imitate it; OpenRouter puts an HTTP status in code and the upstream
// provider's text in metadata.raw.
type openAIErrorJSON struct {
	Message  string          `json:"message"`
	Type     string          `json:"type"`
	Code     json.RawMessage `json:"code"`
	Metadata struct {
		Raw any `json:"raw"`
	} `json:"metadata"`
}

// errorText finds the message in an error body, whatever its shape, and
// the error's type and code.
func errorText(body []byte) (message, code string) {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return truncate(strings.TrimSpace(string(body)), 2000), ""
	}
	var text string
	if json.Unmarshal(doc.Error, &text) == nil && text != "" {
		return text, ""
	}
	var e openAIErrorJSON
	if json.Unmarshal(doc.Error, &e) == nil && e.Message != "" {
		return e.Message, e.Type + " " + strings.Trim(string(e.Code), `"`)
	}
	if doc.Message != "" {
		return doc.Message, ""
	}
	if doc.Detail != "" {
		return doc.Detail, ""
	}
	return truncate(strings.TrimSpace(string(body)), 2000), ""
}

// classifyStreamError classifies an error object sent as a stream event
// after a 200: by its numeric code when it has one (OpenRouter), else by
// its type; unknown errors mid-stream are the server's.
func classifyStreamError(data []byte) *Error {
	var doc struct {
		Error openAIErrorJSON `json:"error"`
	}
	_ = json.Unmarshal(data, &doc)
	e := doc.Error
	message := e.Message
	if message == "" {
		message = truncate(strings.TrimSpace(string(data)), 2000)
	}
	if raw, ok := e.Metadata.Raw.(string); ok && raw != "" {
		message += "\n" + raw
	}
	code := strings.Trim(string(e.Code), `"`)
	status := statusOfCode(code + " " + e.Type)
	var n int
	if json.Unmarshal(e.Code, &n) == nil && n >= 400 && n < 600 {
		status = n
	}
	return classifyStatus(status, nil, message, code+" "+e.Type)
}

// statusOfCode maps OpenAI's error types and codes onto HTTP statuses.
func statusOfCode(code string) int {
	switch {
	case strings.Contains(code, "rate_limit"), strings.Contains(code, "insufficient_quota"):
		return http.StatusTooManyRequests
	case strings.Contains(code, "context_length"), strings.Contains(code, "invalid_request"),
		strings.Contains(code, "invalid_prompt"):
		return http.StatusBadRequest
	case strings.Contains(code, "authentication"), strings.Contains(code, "invalid_api_key"):
		return http.StatusUnauthorized
	case strings.Contains(code, "not_found"):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}
