package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenDirSpecs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "made", "content")
	for _, spec := range []string{root, "dir:" + root} {
		s, err := Open(spec, Options{})
		require.NoError(t, err, spec)
		require.Equal(t, "dir:"+root, s.Name())
	}
	for _, spec := range []string{"", "relative/path", "dir:", "http://host/bucket"} {
		_, err := Open(spec, Options{})
		require.Error(t, err, "spec %q", spec)
	}
}

func TestParseS3Spec(t *testing.T) {
	cfg, err := parseS3Spec("s3://bucket/a/b/?endpoint=127.0.0.1:7070&secure=false")
	require.NoError(t, err)
	require.Equal(t, S3Config{Bucket: "bucket", Prefix: "a/b", Endpoint: "127.0.0.1:7070", Region: "us-east-1"}, cfg)

	cfg, err = parseS3Spec("s3://bucket?region=eu-west-1")
	require.NoError(t, err)
	require.Equal(t, S3Config{Bucket: "bucket", Region: "eu-west-1", Secure: true}, cfg, "AWS over https")

	for _, spec := range []string{
		"s3://AKIAEXAMPLE:wJalrXUtnFEMIsecret@bucket/p",
		"s3://bucket/p?secret_key=wJalrXUtnFEMIsecret",
		"s3://bucket?secure=maybe",
		"s3:///prefix",
	} {
		_, err := parseS3Spec(spec)
		require.Error(t, err, spec)
		require.NotContains(t, err.Error(), "wJalrXUtnFEMIsecret")
	}
}

// A worker that unsets its secrets before opening the store gets told so,
// not an AccessDenied on its first write.
func TestOpenS3WithoutSecret(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err := Open("s3://bucket?endpoint=127.0.0.1:1&secure=false", Options{})
	require.ErrorContains(t, err, "AWS_SECRET_ACCESS_KEY is not")
}
