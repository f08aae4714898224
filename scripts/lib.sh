# Shared by scripts/demo and scripts/test: find or install the Temporal CLI.
# Only `go install` from the module proxy: nothing is downloaded at run time.

TEMPORAL_CLI_MODULE="github.com/temporalio/cli/cmd/temporal@v1.5.1"

temporal_cli() {
  if [ -n "${TEMPORAL_CLI:-}" ] && [ -x "$TEMPORAL_CLI" ]; then
    echo "$TEMPORAL_CLI"; return
  fi
  if command -v temporal >/dev/null 2>&1; then
    command -v temporal; return
  fi
  local bin
  bin="$(go env GOBIN)"
  [ -n "$bin" ] || bin="$(go env GOPATH)/bin"
  if [ ! -x "$bin/temporal" ]; then
    echo "Installing the Temporal CLI ($TEMPORAL_CLI_MODULE); the first build takes a few minutes..." >&2
    go install "$TEMPORAL_CLI_MODULE" >&2
  fi
  echo "$bin/temporal"
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
