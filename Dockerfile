# Build a static csv-cleaner binary and ship it on a distroless, non-root base.
FROM golang:1.26 AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/csv-cleaner ./cmd/csv-cleaner

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/csv-cleaner /csv-cleaner
USER 65532:65532
ENTRYPOINT ["/csv-cleaner"]
