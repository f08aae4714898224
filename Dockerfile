# The worker and starter binaries on a small Debian base with bash (the bash
# tool runs commands with it) and bubblewrap (the sandbox every command runs
# in). The worker runs as an unprivileged user: the kernel applies the
# sandbox's process limit only to non-root users.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter \
    && CGO_ENABLED=0 go build -o /out/agentloop-netbridge ./netbridge

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends bash bubblewrap ca-certificates git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 agent \
    && mkdir -p /workspace /var/lib/agentloop/content \
    && chown agent:agent /workspace /var/lib/agentloop/content
COPY --from=build /out/worker /out/starter /out/agentloop-netbridge /usr/local/bin/
ENV AGENTLOOP_STORE=/var/lib/agentloop/content
USER agent
WORKDIR /workspace
ENTRYPOINT []
