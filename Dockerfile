# syntax=docker/dockerfile:1
# kraftwatch: a static binary on distroless. Build flags match `make build`.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/kraftwatch .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kraftwatch /kraftwatch
# Non-root. Kafka writes its snapshots (.checkpoint) readable by their owner only, so
# run the container as Kafka's user where they share a volume (compose.yaml: 1000:1000).
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["/kraftwatch", "probe", "http://127.0.0.1:8080/livez"]
ENTRYPOINT ["/kraftwatch"]
CMD ["run"]
