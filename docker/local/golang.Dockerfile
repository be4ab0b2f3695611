# Local stand-in for golang:<version>-bookworm (no registry is reachable
# where the deploy test runs): the Debian base of scripts/build-images.sh,
# the C toolchain cgo needs, and the host's Go toolchain (/usr/local/go,
# sent in the build context by build-images.sh, checked against go.mod),
# and go.sum's modules.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc libc6-dev ca-certificates git pkgconf \
 && rm -rf /var/lib/apt/lists/*
COPY go /usr/local/go
# go.sum's modules as a file proxy (made by build-images.sh on the host):
# `go mod download` in docker/Dockerfile needs no network. go.sum still
# verifies every module.
COPY modproxy /go/modproxy
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOPROXY=file:///go/modproxy GOSUMDB=off GOTOOLCHAIN=local
WORKDIR /go
