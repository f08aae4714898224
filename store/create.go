package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/minio/minio-go/v7"
)

// errExists is a Create whose key already holds an object.
var errExists = errors.New("the key already holds an object")

// creator is a Backend that can store an object only where none is, in
// one step: the store id is written that way, so that two workers opening
// a new store at the same instant agree on one id.
type creator interface {
	// Create stores data under key unless key holds an object, when it
	// returns errExists and leaves it as it is.
	Create(ctx context.Context, key string, data []byte) error
}

// Create writes a synced temporary file and links it to the key's path:
// link(2) fails with EEXIST where a file is, and never replaces it.
func (d *Dir) Create(ctx context.Context, key string, data []byte) error {
	return d.place(key, data, os.Link)
}

// errNoConditionalPut is an S3 server that does not take If-None-Match on
// PutObject (conditional writes came to AWS S3 in 2024).
var errNoConditionalPut = errors.New("the S3 server does not support conditional writes")

// Create uploads the object with If-None-Match: *, which S3 refuses with
// 412 Precondition Failed where an object is.
func (s *S3) Create(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	opts.SetMatchETagExcept("*")
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)), opts)
	if err == nil {
		return nil
	}
	switch resp := minio.ToErrorResponse(err); {
	case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed":
		return errExists
	case resp.StatusCode == http.StatusNotImplemented || resp.Code == "NotImplemented":
		return errNoConditionalPut
	}
	return fmt.Errorf("content store %s: create %s: %w", s.name, key, err)
}
