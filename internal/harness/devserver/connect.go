package devserver

import (
	"context"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Connect is the command-line tools' server (conformance/cmd's loadrun
// and trace): the one at TEMPORAL_ADDRESS when that is set, with a client
// that logs warnings and errors only, or else a dev server of their own
// started with o. stop closes that client or stops that server. Tests use
// testenv.Client instead.
func Connect(ctx context.Context, o Options) (c client.Client, stop func(), err error) {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: WarnLogger()})
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	srv, err := Start(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return srv.Client(), func() { _ = srv.Stop() }, nil
}

// WarnLogger is an SDK logger that prints warnings and errors only.
func WarnLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
