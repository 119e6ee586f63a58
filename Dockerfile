# syntax=docker/dockerfile:1
# Build: docker build -t pitcrew .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# cgo for tree-sitter's Elixir grammar (the evidence guard reads Elixir as
# code): the image's gcc links it statically, with Go's own resolver.
RUN CGO_ENABLED=1 go build -trimpath -tags netgo,osusergo -ldflags='-s -w -linkmode external -extldflags "-static"' -o /out/pitcrew ./cmd/pitcrew && mkdir -p /out/data

# A static binary on distroless: no shell, runs as the nonroot user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/pitcrew /usr/local/bin/pitcrew
# /data holds the credentials the setup pages write; owned by nonroot.
COPY --from=build --chown=65532:65532 /out/data /data
USER nonroot:nonroot
ENV PITCREW_ADDR=:8080 PITCREW_CREDENTIALS_FILE=/data/credentials.yml
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["/usr/local/bin/pitcrew", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/pitcrew"]
