// Package temporalenv reads the standard Temporal client configuration, so
// the worker and the starter connect to a local dev server, a self-hosted
// cluster with mTLS, or Temporal Cloud (API key or mTLS) from the same
// variables the Temporal CLI and SDKs read. It is a thin layer over the
// SDK's go.temporal.io/sdk/contrib/envconfig:
//
//	TEMPORAL_ADDRESS            host:port (default localhost:7233)
//	TEMPORAL_NAMESPACE          namespace (default "default")
//	TEMPORAL_API_KEY            API key; turns TLS on unless TEMPORAL_TLS=false
//	TEMPORAL_TLS                true or false (1 or 0)
//	TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH   client certificate (mTLS)
//	TEMPORAL_TLS_SERVER_CA_CERT_PATH                              CA for the server's certificate
//	TEMPORAL_TLS_SERVER_NAME    SNI / name to verify the server as
//	TEMPORAL_TLS_DISABLE_HOST_VERIFICATION
//	TEMPORAL_TLS_*_DATA         PEM text instead of a path
//	TEMPORAL_CLIENT_AUTHORITY   :authority override
//	TEMPORAL_GRPC_META_NAME     extra gRPC header "name" (FromOS only)
//	TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE   the TOML profile file `temporal config` writes
//
// The Temporal CLI's shorter names are accepted too: TEMPORAL_TLS_CERT,
// TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA and their _DATA forms. Setting any TLS
// variable turns TLS on; TEMPORAL_TLS=false together with one is an error.
package temporalenv
