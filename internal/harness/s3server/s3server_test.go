package s3server

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
)

// An object written before a restart reads after it: Stop and Restart keep
// the port and the data, which is what tests of an unreachable store need.
func TestRestartKeepsData(t *testing.T) {
	s := Start(t)
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1", MaxRetries: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.PutObject(ctx, s.Bucket, "a/b", bytes.NewReader([]byte("hello")), 5, minio.PutObjectOptions{})
	require.NoError(t, err)

	s.Stop()
	_, err = c.StatObject(ctx, s.Bucket, "a/b", minio.StatObjectOptions{})
	require.Error(t, err, "the server is stopped")

	s.Restart()
	obj, err := c.GetObject(ctx, s.Bucket, "a/b", minio.GetObjectOptions{})
	require.NoError(t, err)
	data, err := io.ReadAll(obj)
	require.NoError(t, err)
	require.Equal(t, "hello", string(data))
}
