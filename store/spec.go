package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvStore is the variable the worker and the commands read a store spec
// from.
const EnvStore = "AGENTLOOP_STORE"

// OpenBackend returns the backend a spec names:
//
//	/var/lib/agentloop/content     a directory (an absolute path)
//	dir:content                    a directory (any path)
//	s3://bucket/optional/prefix?endpoint=127.0.0.1:7070&region=us-east-1&secure=false
//
// An S3 spec's endpoint defaults to AWS and secure (https) to true. Its
// credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, read here once (the worker then unsets them, see
// internal/secretenv), never from the spec; with none set requests go
// unsigned. Opening an S3 store checks the bucket and creates it if
// missing.
func OpenBackend(spec string) (Backend, error) {
	switch {
	case strings.HasPrefix(spec, "s3://"):
		cfg, err := parseS3Spec(spec)
		if err != nil {
			return nil, err
		}
		id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if id != "" && secret == "" {
			// Unsigned requests would fail later with a vaguer AccessDenied.
			return nil, errors.New("content store: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not (open the store before secretenv.Unset)")
		}
		cfg.Creds = credentials.NewStaticV4(id, secret, os.Getenv("AWS_SESSION_TOKEN"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return NewS3(ctx, cfg)
	case strings.HasPrefix(spec, "dir:") && len(spec) > len("dir:"):
		return NewDir(strings.TrimPrefix(spec, "dir:"))
	case filepath.IsAbs(spec):
		return NewDir(spec)
	}
	return nil, errors.New("content store: want an absolute path, dir:PATH or s3://BUCKET/PREFIX?endpoint=HOST:PORT")
}

func parseS3Spec(spec string) (S3Config, error) {
	u, err := url.Parse(spec)
	if err != nil {
		// url.Parse quotes the spec, which may hold a pasted secret.
		return S3Config{}, errors.New("content store: an s3:// spec that is not a URL")
	}
	if u.User != nil {
		return S3Config{}, errors.New("content store: credentials do not go in the spec; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/"), Secure: true}
	if cfg.Bucket == "" {
		return S3Config{}, errors.New("content store: an s3:// spec names no bucket")
	}
	for name, vals := range u.Query() {
		v := vals[len(vals)-1]
		switch name {
		case "endpoint":
			if strings.Contains(v, "://") {
				return S3Config{}, fmt.Errorf("content store: endpoint=%q: want host:port without a scheme (secure=false for http)", v)
			}
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
		case "secure":
			if cfg.Secure, err = strconv.ParseBool(v); err != nil {
				return S3Config{}, fmt.Errorf("content store: secure=%q: want true or false", v)
			}
		default:
			// Unknown parameters are refused, not ignored: a typo must not
			// quietly send content to AWS, and a key must not sit in a spec.
			return S3Config{}, fmt.Errorf("content store: unknown s3 spec parameter %q (want endpoint, region, secure)", clip(name))
		}
	}
	if cfg.Endpoint != "" && cfg.Region == "" {
		// Saves a GetBucketLocation round trip that some servers lack.
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}

// DefaultSpec is the store a worker or client uses when told none:
// $AGENTLOOP_STORE, else a directory in the user's state directory, which
// survives the process (a single host's workers and clients share it).
func DefaultSpec() string {
	if v := os.Getenv(EnvStore); v != "" {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "agentloop-content")
	}
	return filepath.Join(home, ".local", "state", "agentloop", "content")
}
