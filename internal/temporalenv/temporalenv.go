package temporalenv

import (
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
)

// aliases maps the Temporal CLI's variable names to the SDK's; the SDK's
// name wins when both are set.
var aliases = map[string]string{
	"TEMPORAL_TLS_CLIENT_CERT_PATH":    "TEMPORAL_TLS_CERT",
	"TEMPORAL_TLS_CLIENT_KEY_PATH":     "TEMPORAL_TLS_KEY",
	"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "TEMPORAL_TLS_CA",
	"TEMPORAL_TLS_CLIENT_CERT_DATA":    "TEMPORAL_TLS_CERT_DATA",
	"TEMPORAL_TLS_CLIENT_KEY_DATA":     "TEMPORAL_TLS_KEY_DATA",
	"TEMPORAL_TLS_SERVER_CA_CERT_DATA": "TEMPORAL_TLS_CA_DATA",
}

// ClientOptions returns client options from the environment getenv reads
// (os.Getenv in a program): HostPort, Namespace, ConnectionOptions.TLS,
// Credentials for an API key, headers and authority. The caller adds its
// Logger, DataConverter and the like. Flags that name an address or
// namespace explicitly should override HostPort and Namespace afterwards.
func ClientOptions(getenv func(string) string) (client.Options, error) {
	return load(lookup{getenv: getenv})
}

// FromOS is ClientOptions(os.Getenv), plus TEMPORAL_GRPC_META_* headers,
// which need the whole environment.
func FromOS() (client.Options, error) {
	return load(lookup{getenv: os.Getenv, environ: os.Environ})
}

func load(env lookup) (client.Options, error) {
	for _, name := range []string{"TEMPORAL_TLS", "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"} {
		if v, ok := env.LookupEnv(name); ok {
			if _, valid := parseBool(v); !valid {
				return client.Options{}, fmt.Errorf("%s=%q: want true or false", name, v)
			}
		}
	}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{EnvLookup: env})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client configuration: %w", err)
	}
	if prof.TLS != nil && prof.TLS.Disabled && hasTLSMaterial(prof.TLS) {
		return client.Options{}, fmt.Errorf("TEMPORAL_TLS=false, but a TLS certificate, key, CA or server name is configured")
	}
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client configuration: %w", err)
	}
	if opts.HostPort == "" {
		opts.HostPort = client.DefaultHostPort
	}
	if opts.Namespace == "" {
		opts.Namespace = client.DefaultNamespace
	}
	return opts, nil
}

func hasTLSMaterial(t *envconfig.ClientConfigTLS) bool {
	return t.ClientCertPath != "" || len(t.ClientCertData) > 0 || t.ClientKeyPath != "" || len(t.ClientKeyData) > 0 ||
		t.ServerCACertPath != "" || len(t.ServerCACertData) > 0 || t.ServerName != ""
}

// Describe says where options connect and how, for a log line; it never
// includes a key or certificate.
func Describe(o client.Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s namespace %s", orDefault(o.HostPort, client.DefaultHostPort), orDefault(o.Namespace, client.DefaultNamespace))
	t := o.ConnectionOptions.TLS
	switch {
	case t == nil && o.Credentials != nil && !o.ConnectionOptions.TLSDisabled:
		b.WriteString(", TLS")
	case t == nil:
		b.WriteString(", no TLS")
	default:
		var parts []string
		if len(t.Certificates) > 0 || t.GetClientCertificate != nil {
			parts = append(parts, "client certificate")
		}
		if t.RootCAs != nil {
			parts = append(parts, "custom CA")
		}
		if t.ServerName != "" {
			parts = append(parts, "server name "+t.ServerName)
		}
		if t.InsecureSkipVerify {
			parts = append(parts, "host verification OFF")
		}
		b.WriteString(", TLS")
		if len(parts) > 0 {
			b.WriteString(" (" + strings.Join(parts, ", ") + ")")
		}
	}
	if o.Credentials != nil {
		b.WriteString(", API key")
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// lookup adapts a getenv function to envconfig.EnvLookup. An empty value
// counts as unset, as os.Getenv cannot tell them apart.
type lookup struct {
	getenv  func(string) string
	environ func() []string
}

func (l lookup) LookupEnv(name string) (string, bool) {
	if v := l.getenv(name); v != "" {
		return v, true
	}
	if alias, ok := aliases[name]; ok {
		if v := l.getenv(alias); v != "" {
			return v, true
		}
	}
	return "", false
}

func (l lookup) Environ() []string {
	if l.environ == nil {
		return nil
	}
	return l.environ()
}

func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "1", "true":
		return true, true
	case "0", "false":
		return false, true
	}
	return false, false
}
