# The worker and starter binaries on a small Debian base with bash (the bash
# tool runs commands with it).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends bash ca-certificates git && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/worker /out/starter /usr/local/bin/
WORKDIR /workspace
ENTRYPOINT []
