package temporalenv

import (
	"os"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/codec"
)

// Connection is the client options the worker and the starter use: the
// standard Temporal environment (and profile file), then the -address and
// -namespace flags when given, and payload encryption when codec keys are
// configured (AGENTLOOP_CODEC_KEYS). It returns the keys for logging their
// ids; they are empty when encryption is off.
func Connection(address, namespace string) (client.Options, codec.Keys, error) {
	opts, err := FromOS()
	if err != nil {
		return client.Options{}, codec.Keys{}, err
	}
	if address != "" {
		opts.HostPort = address
	}
	if namespace != "" {
		opts.Namespace = namespace
	}
	keys, err := codec.KeysFromEnv(os.Getenv)
	if err != nil {
		return client.Options{}, codec.Keys{}, err
	}
	opts.DataConverter = codec.NewDataConverter(keys)
	opts.FailureConverter = codec.NewFailureConverter(keys)
	return opts, keys, nil
}
