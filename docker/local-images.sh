#!/bin/sh
# Stand-ins for the images docker-compose.yml pulls, for a machine that reaches Debian's mirrors and
# PyPI but not Docker Hub or PyTorch's wheel index. It builds, with the engine `docker` talks to:
#   heraldbench-local/bookworm:minbase      Debian bookworm from `debootstrap --variant=minbase`
#   heraldbench-local/python:3.11-bookworm  for python:3.11-slim (Debian's Python 3.11)
#   heraldbench-local/python-torch:3.11-bookworm  the same with torch 2.13.0 (this machine's CPU
#                                           wheel when pip has one on disk, else PyPI's)
#   heraldbench-local/postgres:15-bookworm  for postgres:16 (Debian's PostgreSQL 15, same contract)
# and writes docker/local-images.env: the variables that point compose at them (append it to .env).
# Needs root, debootstrap and a running Docker engine. Images that exist are kept (FORCE=1 rebuilds).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
BOOKWORM=heraldbench-local/bookworm:minbase
PYTHON=heraldbench-local/python:3.11-bookworm
TORCH=heraldbench-local/python-torch:3.11-bookworm
POSTGRES=heraldbench-local/postgres:15-bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

say() { printf 'local-images: %s\n' "$*"; }
have() { [ "${FORCE:-0}" != 1 ] && docker image inspect "$1" > /dev/null 2>&1; }
build() {  # build TAG DOCKERFILE CONTEXT [ARG=VALUE...]
    tag=$1 file=$2 context=$3; shift 3
    set -- $(for arg in "$@"; do printf -- '--build-arg %s ' "$arg"; done)
    say "building $tag"
    DOCKER_BUILDKIT=0 docker build --quiet -t "$tag" -f "$file" "$@" "$context" > /dev/null
}

if have "$BOOKWORM"; then
    say "$BOOKWORM exists"
else
    say "debootstrap bookworm (minbase) from $MIRROR"
    debootstrap --variant=minbase bookworm "$WORK/rootfs" "$MIRROR" > "$WORK/debootstrap.log" \
        || { tail -20 "$WORK/debootstrap.log"; exit 1; }
    tar -C "$WORK/rootfs" -c . | docker import - "$BOOKWORM" > /dev/null
    rm -rf "$WORK/rootfs"
fi

# The Python stand-in trusts this machine's CA bundle (HOST_CA_BUNDLE), as pip here does.
mkdir "$WORK/python"
cp "${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$WORK/python/ca-certificates.crt"
have "$PYTHON" || build "$PYTHON" "$HERE/local/python.Dockerfile" "$WORK/python" \
    "BOOKWORM_IMAGE=$BOOKWORM"
have "$POSTGRES" || build "$POSTGRES" "$HERE/local/postgres.Dockerfile" "$HERE/local" \
    "BOOKWORM_IMAGE=$BOOKWORM"

if have "$TORCH"; then
    say "$TORCH exists"
else
    # pip's own choice for torch==2.13.0 on this machine: a local CPU wheel where one lies on disk
    # (pip's find-links), else PyPI's wheel (the CUDA build, several GB with NVIDIA's libraries).
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$WORK/torch" torch==2.13.0
    wheel=$(ls "$WORK"/torch/torch-*.whl)
    say "torch from $(basename "$wheel")"
    cp "$HERE/local/torch.Dockerfile" "$WORK/torch/Dockerfile"
    build "$TORCH" "$WORK/torch/Dockerfile" "$WORK/torch" "PYTHON_IMAGE=$PYTHON"
fi

cat > "$HERE/local-images.env" <<VARS
# Written by docker/local-images.sh: stand-ins for the official images (see docs/stack.md).
PYTHON_IMAGE=$PYTHON
APP_BASE_IMAGE=$TORCH
POSTGRES_IMAGE=$POSTGRES
VARS
say "stand-ins built: these are NOT the official images (Debian's Python 3.11 and PostgreSQL 15)"
docker image ls --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' 'heraldbench-local/*'
say "their variables are in docker/local-images.env; append them to .env to use them:"
say "  cat docker/local-images.env >> .env"
