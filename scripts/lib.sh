# Shared by scripts/demo and scripts/test: find or install the Temporal CLI
# (and versitygw for the tests).
# Only `go install` from the module proxy: nothing is downloaded at run time.

TEMPORAL_CLI_MODULE="github.com/temporalio/cli/cmd/temporal@v1.5.1"
# The CLI is built in its own module graph with one dependency raised: the
# SQLite driver its dev server keeps its state in. v1.34.1, the CLI's pin,
# leaks a cancelled query's open rows; SQLite then keeps the connection's
# interrupt flag set, and the dev server's only connection answers every
# later query with "interrupted (9)": every request fails ("Namespace default
# is not found") until the server restarts. Cancelled requests under load
# made it happen in CI (fixed upstream in v1.40.1 and v1.42.2).
TEMPORAL_CLI_SQLITE="modernc.org/sqlite@v1.62.0"
TEMPORAL_CLI_DIR_NAME="temporal-cli-1.5.1-sqlite-1.62.0"

# temporal_cli prints the path of the Temporal CLI: $TEMPORAL_CLI when set,
# else the project's build (above), built the first time.
temporal_cli() {
  if [ -n "${TEMPORAL_CLI:-}" ] && [ -x "$TEMPORAL_CLI" ]; then
    echo "$TEMPORAL_CLI"; return
  fi
  local dir
  dir="$(go_bin_dir)/$TEMPORAL_CLI_DIR_NAME"
  if [ ! -x "$dir/temporal" ]; then
    echo "Building the Temporal CLI (${TEMPORAL_CLI_MODULE##*/cmd/}, with $TEMPORAL_CLI_SQLITE); the first build takes a few minutes..." >&2
    build_in_cli_graph "$dir" "$TEMPORAL_CLI_MODULE" >&2
  fi
  echo "$dir/temporal"
}

VERSITYGW_MODULE="github.com/versity/versitygw/cmd/versitygw@v1.8.0"

# The S3-compatible server the content store's tests run against
# (internal/harness/s3server).
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

STATICCHECK_MODULE="honnef.co/go/tools/cmd/staticcheck@v0.8.2"

# staticcheck (scripts/test runs it with staticcheck.conf), installed once
# into GOBIN with go install; a binary of another version is replaced.
staticcheck_bin() {
  local bin
  bin="$(go_bin_dir)/staticcheck"
  if [ ! -x "$bin" ] || ! "$bin" -version 2>/dev/null | grep -qF "(${STATICCHECK_MODULE##*@v})"; then
    echo "Installing staticcheck ($STATICCHECK_MODULE)..." >&2
    go install "$STATICCHECK_MODULE" >&2
  fi
  echo "$bin"
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

# The self-hosted stack (scripts/stack, internal/harness/stack): Temporal's server
# and its schema tool, and the Web UI's server, built from source into
# directories of their own under GOBIN (both modules name their binary
# "server"); internal/harness/stack's constants name the same (a test keeps them
# equal).
TEMPORAL_SERVER_MODULES="go.temporal.io/server/cmd/server@v1.29.1 go.temporal.io/server/cmd/tools/sql@v1.29.1"
TEMPORAL_SERVER_DIR_NAME="temporal-server-1.29.1"
TEMPORAL_UI_MODULE="github.com/temporalio/ui-server/v2/cmd/server@v2.42.1"
TEMPORAL_UI_DIR_NAME="temporal-ui-server-2.42.1"

go_bin_dir() {
  local bin
  bin="$(go env GOBIN)"
  [ -n "$bin" ] || bin="$(go env GOPATH)/bin"
  echo "$bin"
}

# build_in_cli_graph DIR PKG@VERSION... builds the packages into DIR in the
# Temporal CLI's module graph: a throwaway module requires the CLI and adds
# them as tools. The CLI embeds the same server and Web UI versions, so
# once the CLI is built nearly every package is in the build cache: the
# server, schema tool and UI build in about 15 s instead of 6 CPU-minutes
# each way (go install builds them in their own graphs, with other versions
# of OpenTelemetry and the SDK, so nothing is shared). Their dependencies
# are the versions the CLI's dev server runs with, the SQLite driver raised
# as for the CLI (TEMPORAL_CLI_SQLITE) so that all three share one build.
build_in_cli_graph() {
  local dir="$1" tmp rc=0 m
  shift
  tmp="$(mktemp -d)"
  (
    cd "$tmp" && go mod init stacktools >/dev/null 2>&1 &&
      go get "github.com/temporalio/cli@${TEMPORAL_CLI_MODULE##*@}" >&2 &&
      go get -tool "$@" >&2 &&
      go get "$TEMPORAL_CLI_SQLITE" >&2 &&
      mkdir -p "$dir" &&
      for m in "$@"; do
        go build -o "$dir/$(basename "${m%@*}")" "${m%@*}" >&2 || exit 1
      done
  ) || rc=$?
  rm -rf "$tmp"
  return "$rc"
}

# Installs Temporal's server and schema tool when missing and exports
# TEMPORAL_SERVER and TEMPORAL_SQL_TOOL.
ensure_temporal_server() {
  local dir
  dir="$(go_bin_dir)/$TEMPORAL_SERVER_DIR_NAME"
  if [ ! -x "$dir/server" ] || [ ! -x "$dir/sql" ]; then
    echo "Building Temporal's server and schema tool ($TEMPORAL_SERVER_MODULES)..." >&2
    # shellcheck disable=SC2086
    build_in_cli_graph "$dir" $TEMPORAL_SERVER_MODULES
  fi
  export TEMPORAL_SERVER="$dir/server" TEMPORAL_SQL_TOOL="$dir/sql"
}

# Installs the Web UI's server when missing and exports TEMPORAL_UI_SERVER;
# the stack runs without a UI when it does not build.
ensure_temporal_ui() {
  local dir
  dir="$(go_bin_dir)/$TEMPORAL_UI_DIR_NAME"
  if [ ! -x "$dir/server" ]; then
    echo "Building the Temporal Web UI's server ($TEMPORAL_UI_MODULE)..." >&2
    build_in_cli_graph "$dir" "$TEMPORAL_UI_MODULE" || { echo "The Web UI's server did not build; the stack runs without it." >&2; return 0; }
  fi
  export TEMPORAL_UI_SERVER="$dir/server"
}

# PostgreSQL from Debian's packages (the stack runs its own cluster in
# .stack/, on a port of its own, whatever the package starts).
ensure_postgresql() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing PostgreSQL..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends postgresql >&2 ||
      { apt-get update >&2 && apt-get install -y --no-install-recommends postgresql >&2; }
  else
    echo "PostgreSQL is missing: install it (Debian/Ubuntu: sudo apt-get install postgresql)." >&2
    return 1
  fi
}

# The MCP servers the MCP tool tests run (tools/mcptools):
# @modelcontextprotocol/server-filesystem and server-everything from npm,
# pinned by testdata/mcp/package-lock.json and installed there once with
# npm ci (again only when the lock file changes). Node.js and npm come from
# Debian's packages when missing.
ensure_mcp_servers() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/testdata/mcp"
  if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] &&
    [ -x "$dir/node_modules/.bin/mcp-server-filesystem" ] && [ -x "$dir/node_modules/.bin/mcp-server-everything" ]; then
    return
  fi
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "Installing Node.js and npm (the MCP servers the tests run)..." >&2
      apt-get install -y nodejs npm >&2 || { apt-get update >&2 && apt-get install -y nodejs npm >&2; }
    else
      echo "npm is missing: install Node.js and npm (Debian/Ubuntu: sudo apt-get install nodejs npm)." >&2
      return 1
    fi
  fi
  echo "Installing the MCP test servers (npm ci in testdata/mcp)..." >&2
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
}

# npm_ci_once DIR PACKAGE WHAT installs DIR's packages, pinned by its
# package-lock.json, with npm ci: when PACKAGE (a directory under
# node_modules) is missing or the lock file changed since the last install.
# ensure_mcp_servers provides npm.
npm_ci_once() {
  local dir="$1" pkg="$2" what="$3"
  if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] &&
    [ -d "$dir/node_modules/$pkg" ]; then
    return
  fi
  command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js and npm (Debian/Ubuntu: sudo apt-get install nodejs npm)." >&2; return 1; }
  echo "Installing $what (npm ci in ${dir#"$(repo_root)/"})..." >&2
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
}

repo_root() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}

# The Node.js client of the codec server's GET /blobs/ test
# (codec/cmd/codec-server TestBlobsFromNode): @temporalio/client from npm.
ensure_node_client() {
  npm_ci_once "$(repo_root)/codec/cmd/codec-server/testdata/node" @temporalio/client "the codec server's Node test client"
}

# The TypeScript example's packages (@temporalio/client, @temporalio/worker
# and the TypeScript compiler), for examples/typescript_test.go.
ensure_ts_example() {
  npm_ci_once "$(repo_root)/examples/typescript" @temporalio/worker "the TypeScript example's packages"
}

# The packages of the conformance scenarios' TypeScript worker (the same
# pins as the example's), for conformance's TestConformanceTypeScript.
ensure_ts_conformance() {
  npm_ci_once "$(repo_root)/conformance/typescript" @temporalio/worker "the conformance TypeScript worker's packages"
}

# Jaeger v1.75.0 (its v2 binary: OTLP in, query API and UI out), for the
# telemetry tests and `scripts/demo --traces`. Jaeger's go.mod has replace
# directives, so `go install pkg@version` refuses it: a throwaway module
# adds it as a tool (go get -tool) and builds it into GOBIN/jaeger-1.75.0
# (internal/harness/jaeger looks there). It serves tests and the demo, a few
# traces each, so it is built without optimizations or symbols: 7 instead
# of 11 CPU-minutes, about 4 minutes on an idle 2-core machine.
JAEGER_MODULE="github.com/jaegertracing/jaeger/cmd/jaeger@v1.75.0"
JAEGER_DIR_NAME="jaeger-1.75.0"

jaeger_bin() {
  if [ -n "${JAEGER:-}" ] && [ -x "$JAEGER" ]; then
    echo "$JAEGER"; return
  fi
  local dir tmp
  dir="$(go_bin_dir)/$JAEGER_DIR_NAME"
  if [ ! -x "$dir/jaeger" ]; then
    echo "Installing Jaeger ($JAEGER_MODULE); the first build takes several minutes..." >&2
    tmp="$(mktemp -d)"
    (cd "$tmp" && go mod init jaegertool >/dev/null 2>&1 && go get -tool "$JAEGER_MODULE" >&2 &&
      mkdir -p "$dir" && go build -gcflags='all=-N -l' -ldflags='-s -w' -o "$dir/jaeger" "${JAEGER_MODULE%@*}" >&2) ||
      { rm -rf "$tmp"; echo "Jaeger did not build" >&2; return 1; }
    rm -rf "$tmp"
  fi
  echo "$dir/jaeger"
}
