# syntax=docker/dockerfile:1
# Build: docker build -t pitcrew .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/pitcrew ./cmd/pitcrew && mkdir -p /out/data

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
