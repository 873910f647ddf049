# Build a static csv-cleaner binary and ship it on a distroless, non-root base.
# There is no Docker engine in CI: test/image parses this file and runs its
# build stage's commands, with the same flags, on the same sources.
FROM golang:1.26 AS build
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" -o /out/csv-cleaner ./cmd/csv-cleaner

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/csv-cleaner /csv-cleaner
USER 65532:65532
ENTRYPOINT ["/csv-cleaner"]
