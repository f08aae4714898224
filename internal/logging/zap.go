package logging

import (
	"os"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logger is a Temporal log.Logger backed by zap.
type Logger struct {
	z *zap.SugaredLogger
}

var (
	_ log.Logger     = Logger{}
	_ log.WithLogger = Logger{}
)

// New returns a zap logger for the SDK. Level is debug, info, warn or error;
// anything else means info. JSON output suits log shippers; console output
// suits a terminal.
func New(level string, json bool) (Logger, *zap.Logger) {
	lvl := zapcore.InfoLevel
	_ = lvl.Set(level)
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.ISO8601TimeEncoder
	enc := zapcore.NewConsoleEncoder(cfg)
	if json {
		enc = zapcore.NewJSONEncoder(cfg)
	}
	z := zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), lvl))
	return Logger{z: z.Sugar()}, z
}

// Wrap adapts an existing zap logger.
func Wrap(z *zap.Logger) Logger { return Logger{z: z.Sugar()} }

func (l Logger) Debug(msg string, keyvals ...any) { l.z.Debugw(msg, keyvals...) }
func (l Logger) Info(msg string, keyvals ...any)  { l.z.Infow(msg, keyvals...) }
func (l Logger) Warn(msg string, keyvals ...any)  { l.z.Warnw(msg, keyvals...) }
func (l Logger) Error(msg string, keyvals ...any) { l.z.Errorw(msg, keyvals...) }

// With returns a logger that adds keyvals to every entry.
func (l Logger) With(keyvals ...any) log.Logger { return Logger{z: l.z.With(keyvals...)} }
