package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Hook is one entry of a run's beforeToolCall or afterToolCall list: a Go
// hook registered in the worker by name (JSON: a plain string, as before
// remote hooks existed), an activity on a task queue served by any
// Temporal SDK (JSON: {"activity": {...}}), or an HTTPS webhook (JSON:
// {"webhook": {...}}). Exactly one is set.
type Hook struct {
	Name     string
	Activity *ActivityHook
	Webhook  *WebhookHook
}

// ActivityHook is a hook served by an activity of ActivityType on
// TaskQueue. It receives pi's hook context as JSON and answers pi's hook
// result (docs/api.md).
type ActivityHook struct {
	TaskQueue    string `json:"taskQueue"`
	ActivityType string `json:"activityType"`
	// Timeout (a Go duration, default DefaultHookTimeout) bounds the hook
	// with all its retries, the wait for a worker included.
	Timeout string `json:"timeout,omitempty"`
}

// WebhookHook is a hook served over HTTPS: the worker POSTs pi's hook
// context as JSON, signed with HMAC-SHA256 under a secret the worker holds
// (named here, never carried in the run), and reads pi's hook result.
type WebhookHook struct {
	URL string `json:"url"`
	// SecretRef names a secret the worker was given with -webhook-secret
	// NAME=...; SecretEnv names an environment variable of the worker that
	// holds it, which must begin with WebhookSecretEnvPrefix. One of them.
	SecretRef string `json:"secretRef,omitempty"`
	SecretEnv string `json:"secretEnv,omitempty"`
	// Timeout (a Go duration, default DefaultHookTimeout) bounds the hook
	// with all its retries.
	Timeout string `json:"timeout,omitempty"`
}

// WebhookSecretEnvPrefix begins the name of every environment variable a
// webhook's secretEnv may name: a run must not sign with the worker's
// provider keys or any other secret of its environment.
const WebhookSecretEnvPrefix = "AGENTLOOP_WEBHOOK_SECRET_"

// DefaultHookTimeout is a remote hook's timeout when it names none.
const DefaultHookTimeout = 10 * time.Second

// maxHookTimeout keeps a typo from holding a tool call for days.
const maxHookTimeout = time.Hour

// HookNames returns Go hooks of the given names.
func HookNames(names ...string) []Hook {
	out := make([]Hook, len(names))
	for i, n := range names {
		out[i] = Hook{Name: n}
	}
	return out
}

// GoHookNames returns the names of the Go hooks among hs, in order.
func GoHookNames(hs []Hook) []string {
	var out []string
	for _, h := range hs {
		if h.IsGo() {
			out = append(out, h.Name)
		}
	}
	return out
}

// HasRemoteHook reports whether any of hs is an activity or a webhook.
func HasRemoteHook(hs []Hook) bool {
	for _, h := range hs {
		if !h.IsGo() {
			return true
		}
	}
	return false
}

// IsGo reports whether h names a Go hook registered in the worker.
func (h Hook) IsGo() bool { return h.Activity == nil && h.Webhook == nil }

// TimeoutOrDefault is the parsed timeout of a remote hook.
func (h Hook) TimeoutOrDefault() time.Duration {
	s := ""
	switch {
	case h.Activity != nil:
		s = h.Activity.Timeout
	case h.Webhook != nil:
		s = h.Webhook.Timeout
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d
	}
	return DefaultHookTimeout
}

// String names the hook in results and logs: the Go hook's name, "activity
// T on queue Q", or "webhook URL".
func (h Hook) String() string {
	switch {
	case h.Activity != nil:
		return fmt.Sprintf("activity %s on task queue %s", h.Activity.ActivityType, h.Activity.TaskQueue)
	case h.Webhook != nil:
		return "webhook " + h.Webhook.URL
	}
	return h.Name
}

type hookJSON struct {
	Activity *ActivityHook `json:"activity,omitempty"`
	Webhook  *WebhookHook  `json:"webhook,omitempty"`
}

// MarshalJSON writes a Go hook as its name, so that inputs without remote
// hooks read as they did before.
func (h Hook) MarshalJSON() ([]byte, error) {
	if h.IsGo() {
		return json.Marshal(h.Name)
	}
	return json.Marshal(hookJSON{Activity: h.Activity, Webhook: h.Webhook})
}

// HookError is a hook entry whose JSON is not a hook: a run's input
// decoding reports its message as it is.
type HookError struct{ msg string }

func (e *HookError) Error() string { return e.msg }

// UnmarshalJSON reads a name or an object with exactly one of activity and
// webhook, refusing fields it does not know.
func (h *Hook) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*h = Hook{}
		return json.Unmarshal(b, &h.Name)
	}
	if len(b) == 0 || b[0] != '{' {
		return &HookError{fmt.Sprintf(`a hook is a Go hook's name (a JSON string), {"activity": {...}} or {"webhook": {...}}, not %.40s`, b)}
	}
	var v hookJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return &HookError{fmt.Sprintf(`a hook is a Go hook's name or {"activity": {...}} or {"webhook": {...}}: %s`, strings.TrimPrefix(err.Error(), "json: "))}
	}
	if (v.Activity == nil) == (v.Webhook == nil) {
		return &HookError{`a hook object has exactly one of "activity" and "webhook"`}
	}
	*h = Hook{Activity: v.Activity, Webhook: v.Webhook}
	return nil
}

// Check says what is wrong with a hook entry, nil when nothing is.
func (h Hook) Check() error {
	var errs []error
	timeout := ""
	switch {
	case h.Activity != nil && h.Webhook != nil:
		return errors.New("a hook is an activity or a webhook, not both")
	case h.Activity != nil:
		if h.Activity.TaskQueue == "" || h.Activity.ActivityType == "" {
			errs = append(errs, errors.New("activity hook: want taskQueue and activityType"))
		}
		timeout = h.Activity.Timeout
	case h.Webhook != nil:
		errs = append(errs, h.Webhook.check())
		timeout = h.Webhook.Timeout
	default:
		if h.Name == "" {
			return errors.New("empty hook name")
		}
		return nil
	}
	if timeout != "" {
		if d, err := time.ParseDuration(timeout); err != nil || d <= 0 || d > maxHookTimeout {
			errs = append(errs, fmt.Errorf("%s: timeout %q: want a positive Go duration up to %v, such as 5s", h, timeout, maxHookTimeout))
		}
	}
	return errors.Join(errs...)
}

func (w *WebhookHook) check() error {
	u, err := url.Parse(w.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fmt.Errorf("webhook hook: url %q: want https://host/path", w.URL)
	}
	if (w.SecretRef == "") == (w.SecretEnv == "") {
		return fmt.Errorf("webhook %s: want exactly one of secretRef (a secret the worker was given) and secretEnv (an environment variable %s...)", w.URL, WebhookSecretEnvPrefix)
	}
	if w.SecretEnv != "" && (len(w.SecretEnv) <= len(WebhookSecretEnvPrefix) || !strings.HasPrefix(w.SecretEnv, WebhookSecretEnvPrefix)) {
		return fmt.Errorf("webhook %s: secretEnv %q: want a variable whose name begins with %s", w.URL, w.SecretEnv, WebhookSecretEnvPrefix)
	}
	return nil
}

// CheckHooks checks a hook list (a run's or a session's beforeToolCall or
// afterToolCall, named field in what it says).
func CheckHooks(field string, hs []Hook) error {
	var errs []error
	for i, h := range hs {
		if err := h.Check(); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
		}
	}
	return errors.Join(errs...)
}
