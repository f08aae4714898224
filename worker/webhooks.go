package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

// webhookFlags configure the webhook hooks runs may name: the secrets they
// are signed with, held by the worker alone, and where they may go.
type webhookFlags struct {
	secrets           secretFiles
	allowNets         *string
	allowHTTPLoopback *bool
}

// secretFiles is the repeatable -webhook-secret NAME=FILE.
type secretFiles map[string]string

func (s secretFiles) String() string { return fmt.Sprint(map[string]string(s)) }

func (s secretFiles) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || name == "" || file == "" {
		return fmt.Errorf("%q: want NAME=FILE", v)
	}
	s[name] = file
	return nil
}

func registerWebhookFlags(fs *flag.FlagSet) webhookFlags {
	f := webhookFlags{secrets: secretFiles{}}
	fs.Var(f.secrets, "webhook-secret", `a secret webhook hooks may be signed with, as NAME=FILE (repeatable): a run names it as {"webhook": {"secretRef": "NAME", ...}}; the file's content (its trailing newline dropped) is the HMAC-SHA256 key. Variables AGENTLOOP_WEBHOOK_SECRET_* serve {"secretEnv": ...} the same way`)
	f.allowNets = fs.String("webhook-allow-nets", "", "comma-separated address ranges beyond the public internet that webhook hooks may reach (a hook service on a private network: 10.1.2.3/32); never the Temporal frontend or this host's own addresses")
	f.allowHTTPLoopback = fs.Bool("webhook-allow-http-loopback", false, "let webhook hooks on loopback addresses use http (tests and local development); otherwise webhooks need https and never reach loopback")
	return f
}

// webhooks reads the secrets (the files, and the AGENTLOOP_WEBHOOK_SECRET_*
// variables, which it removes from the environment) and the egress policy.
// It also returns the secret files, for the sandbox to hide.
func (f webhookFlags) webhooks(frontend string) (*hooks.Webhooks, []string, error) {
	var nets []netip.Prefix
	for _, s := range strings.Split(*f.allowNets, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, nil, fmt.Errorf("-webhook-allow-nets: %w", err)
		}
		nets = append(nets, p)
	}
	w := hooks.NewWebhooks(sandbox.Egress{Frontends: []string{frontend}, AllowNets: nets}, *f.allowHTTPLoopback)
	var files []string
	for name, file := range f.secrets {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, fmt.Errorf("-webhook-secret %s: %w", name, err)
		}
		secret := strings.TrimRight(string(b), "\r\n")
		if secret == "" {
			return nil, nil, fmt.Errorf("-webhook-secret %s: %s is empty", name, file)
		}
		w.Secrets[name] = []byte(secret)
		files = append(files, file)
	}
	w.TakeEnvSecrets()
	return w, files, nil
}
