# Shared by scripts/demo and scripts/test: find or install the Temporal CLI
# (and versitygw for the tests).
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

VERSITYGW_MODULE="github.com/versity/versitygw/cmd/versitygw@v1.8.0"

# The S3-compatible server the content store's tests run against
# (internal/s3server).
versitygw_bin() {
  if [ -n "${VERSITYGW:-}" ] && [ -x "$VERSITYGW" ]; then
    echo "$VERSITYGW"; return
  fi
  if command -v versitygw >/dev/null 2>&1; then
    command -v versitygw; return
  fi
  local bin
  bin="$(go env GOBIN)"
  [ -n "$bin" ] || bin="$(go env GOPATH)/bin"
  if [ ! -x "$bin/versitygw" ]; then
    echo "Installing versitygw ($VERSITYGW_MODULE); the first build takes a minute or two..." >&2
    go install "$VERSITYGW_MODULE" >&2
  fi
  echo "$bin/versitygw"
}

# bubblewrap isolates the bash tool's commands (internal/sandbox); the
# worker refuses to start without a sandbox unless told -sandbox=none.
ensure_bubblewrap() {
  command -v bwrap >/dev/null 2>&1 && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing bubblewrap (the tool sandbox)..." >&2
    apt-get install -y bubblewrap >&2 || { apt-get update >&2 && apt-get install -y bubblewrap >&2; }
  else
    echo "bubblewrap (bwrap) is missing: install it (Debian/Ubuntu: sudo apt-get install bubblewrap)." >&2
    echo "Without it the tools fall back to Landlock where the kernel has it, and fail otherwise." >&2
  fi
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
