package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 backend keeps its blobs.
type S3Config struct {
	Bucket string
	// Prefix is prepended to every key ("a/b" stores "a/b/<scope>/<name>").
	Prefix string
	// Endpoint is the server's host:port; empty means AWS S3. With an
	// endpoint, buckets are addressed by path, which MinIO, R2, GCS interop
	// and versitygw all accept.
	Endpoint string
	Region   string
	// Secure selects https.
	Secure bool
	// Creds signs the requests; nil sends them unsigned.
	Creds *credentials.Credentials
}

// S3 is a Backend in an S3-compatible bucket.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string // "" or ending in "/"
	name   string
}

var _ Backend = (*S3)(nil)

// s3Retries bounds the client's own retries of a failed request: enough to
// ride over a dropped connection, few enough that an unreachable store
// fails the activity in seconds and Temporal's retry policy takes over.
const s3Retries = 3

// NewS3 connects to the bucket and creates it if it does not exist.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	endpoint, lookup := cfg.Endpoint, minio.BucketLookupPath
	if endpoint == "" {
		endpoint, lookup = "s3.amazonaws.com", minio.BucketLookupAuto
	}
	creds := cfg.Creds
	if creds == nil {
		creds = credentials.NewStaticV4("", "", "")
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	s := &S3{bucket: cfg.Bucket, name: "s3://" + cfg.Bucket}
	if prefix != "" {
		s.prefix = prefix + "/"
		s.name += "/" + prefix
	}
	s.name += " at " + endpoint
	client, err := minio.New(endpoint, &minio.Options{
		Creds: creds, Secure: cfg.Secure, Region: cfg.Region, BucketLookup: lookup, MaxRetries: s3Retries,
	})
	if err != nil {
		return nil, fmt.Errorf("content store %s: %w", s.name, err)
	}
	s.client = client
	if err := s.ensureBucket(ctx, cfg.Region); err != nil {
		return nil, fmt.Errorf("content store %s: %w", s.name, err)
	}
	return s, nil
}

func (s *S3) ensureBucket(ctx context.Context, region string) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil || ok {
		return err
	}
	err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
	if err != nil && minio.ToErrorResponse(err).Code != minio.BucketAlreadyOwnedByYou {
		return fmt.Errorf("create bucket: %w", err)
	}
	return nil
}

// Name is "s3://<bucket>/<prefix> at <endpoint>".
func (s *S3) Name() string { return s.name }

// Put uploads the object; S3 makes it visible whole or not at all.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("content store %s: put %s: %w", s.name, key, err)
	}
	return nil
}

// Get downloads the object; NoSuchKey is ErrMissing.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	var data []byte
	if err == nil {
		data, err = io.ReadAll(obj)
		obj.Close()
	}
	if err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("%w %s", ErrMissing, s.name)
		}
		return nil, fmt.Errorf("content store %s: get %s: %w", s.name, key, err)
	}
	return data, nil
}

// ListScopes lists every object once: keys come sorted, so the objects of
// a scope are consecutive and each scope is reported when the next begins.
func (s *S3) ListScopes(ctx context.Context, fn func(scope string, newest time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn fails
	cur, newest := "", time.Time{}
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("content store %s: list: %w", s.name, obj.Err)
		}
		scope, _, ok := strings.Cut(strings.TrimPrefix(obj.Key, s.prefix), "/")
		if !ok || checkSegment(scope) != nil {
			continue
		}
		if scope != cur && cur != "" {
			if err := fn(cur, newest); err != nil {
				return err
			}
			newest = time.Time{}
		}
		cur = scope
		if obj.LastModified.After(newest) {
			newest = obj.LastModified
		}
	}
	if err := ctx.Err(); err != nil || cur == "" {
		return err // a listing cut short must not report a scope's newest object wrongly
	}
	return fn(cur, newest)
}

// ListKeys lists every object under the store's prefix.
func (s *S3) ListKeys(ctx context.Context, fn func(key string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn fails
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("content store %s: list: %w", s.name, obj.Err)
		}
		key := strings.TrimPrefix(obj.Key, s.prefix)
		if checkKey(key) != nil {
			continue
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// DeleteScope deletes the scope's objects one by one: multi-object delete
// is not in every S3 dialect (GCS interop lacks it), and sweeps are rare.
func (s *S3) DeleteScope(ctx context.Context, scope string) error {
	if err := checkSegment(scope); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefix := s.prefix + scope + "/"
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("content store %s: list %s: %w", s.name, scope, obj.Err)
		}
		if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("content store %s: delete %s: %w", s.name, obj.Key, err)
		}
	}
	return ctx.Err()
}
