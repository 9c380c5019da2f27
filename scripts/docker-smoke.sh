#!/usr/bin/env bash
# Build the Docker image and run it the way it is deployed: as uid 10001, the wiki
# mounted read-only, a named volume on /data. Checks `wikibot index`, `wikibot ask`,
# `wikibot health` (unhealthy without a heartbeat), that HTTP/2 (h2) and compiled
# bytecode are in the image, that no test code is in the image, that `docker stop` of
# the bot connected to a Discord stand-in on loopback exits 0 within the grace
# (scripts/docker_stop_check.py, with tini as PID 1 and --read-only, run by the
# project's .venv), and prints the image size. Needs a Docker engine (started here with the vfs
# storage driver when none runs and we are root) and, when BASE cannot be pulled,
# debootstrap to build a stand-in base from Debian's own python3 packages.
#
#   make docker-smoke                      # BASE: the Dockerfile's pinned default, the demo wiki
#   BASE=debian-python3 WIKI=../rtx6kpro make docker-smoke
set -euo pipefail

cd "$(dirname "$0")/.."
# The Dockerfile's own default (pinned by digest), unless BASE is given.
BASE=${BASE:-$(sed -n 's/^ARG BASE=//p' Dockerfile)}
STANDIN_BASE=${STANDIN_BASE:-wikibot-base:bookworm-python3}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=${IMAGE:-wikibot:smoke}
WIKI=$(realpath "${WIKI:-knowledge/demo_wiki}")
VOLUME=wikibot-smoke-$$
WORK=$(mktemp -d)
DOCKERD_PID=

say() { printf '\n== %s\n' "$*"; }
cleanup() {
    docker volume rm -f "$VOLUME" >/dev/null 2>&1 || true
    rm -rf "$WORK"
    if [[ -n $DOCKERD_PID ]]; then
        kill "$DOCKERD_PID" 2>/dev/null || true
        wait "$DOCKERD_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# --- an engine ---------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]] || ! command -v dockerd >/dev/null; then
        echo "docker-smoke: no Docker engine answers, and none can be started here" \
            "(needs root and dockerd, e.g. Debian's docker.io)" >&2
        exit 2
    fi
    say "starting dockerd (vfs storage, no iptables, no bridge; log in $WORK/dockerd.log)"
    dockerd --storage-driver=vfs --iptables=false --bridge=none >"$WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { cat "$WORK/dockerd.log" >&2; exit 2; }
fi

# --- the base image ----------------------------------------------------------------
have_base() {
    docker image inspect "$BASE" >/dev/null 2>&1 || timeout 60 docker pull "$BASE" >/dev/null 2>&1
}
if [[ $BASE == debian-python3 ]] || ! have_base; then
    [[ $BASE == debian-python3 ]] || say "$BASE cannot be pulled: using a stand-in from Debian's python3"
    BASE=$STANDIN_BASE
    if ! docker image inspect "$BASE" >/dev/null 2>&1; then
        command -v debootstrap >/dev/null || {
            echo "docker-smoke: the stand-in base needs debootstrap (apt-get install debootstrap)" >&2
            exit 2
        }
        say "debootstrap bookworm (python3, python3-venv) -> $BASE"
        debootstrap --variant=minbase --include=python3,python3-venv \
            bookworm "$WORK/rootfs" "$DEBIAN_MIRROR" >"$WORK/debootstrap.log" 2>&1 \
            || { tail -20 "$WORK/debootstrap.log" >&2; exit 2; }
        rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
        tar -C "$WORK/rootfs" -c . | docker import - "$BASE" >/dev/null
        rm -rf "$WORK/rootfs"
    fi
fi

# --- the package index, or a wheelhouse --------------------------------------------
BUILD_ARGS=(--build-arg "BASE=$BASE")
if docker run --rm --network host "$BASE" python3 -c \
    "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/pip/', timeout=15)" \
    >/dev/null 2>&1; then
    say "the build installs dependencies from the package index"
else
    say "the package index cannot be reached from a container: wheels built here (pip wheel)"
    rm -rf .wheelhouse
    # The locked versions, checked against their hashes, and the build backend.
    { python3 -m pip wheel --quiet --require-hashes --no-deps --wheel-dir .wheelhouse \
        -r requirements.lock \
        && python3 -m pip wheel --quiet --wheel-dir .wheelhouse 'setuptools>=77' wheel; } \
        >"$WORK/wheel.log" 2>&1 || { tail -20 "$WORK/wheel.log" >&2; exit 1; }
    BUILD_ARGS+=(--build-arg WHEELHOUSE=.wheelhouse)
fi

say "docker build ${BUILD_ARGS[*]} -t $IMAGE ."
docker build --network host "${BUILD_ARGS[@]}" -t "$IMAGE" . >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log" >&2; exit 1; }

# --- running it as deployed ----------------------------------------------------------
mkdir -p "$WORK/config"
printf 'wiki:\n  path: /wiki\n' >"$WORK/config/config.yaml"
chmod -R a+rX "$WORK/config"
docker volume create "$VOLUME" >/dev/null
RUN=(docker run --rm -v "$WIKI:/wiki:ro" -v "$VOLUME:/data" -v "$WORK/config:/config:ro")
failed=0
check() {  # check EXPECTED_EXIT_CODE TITLE -- command...
    local want=$1 title=$2 code=0
    shift 3
    say "$title"
    echo "\$ ${*}"
    "$@" >"$WORK/out" 2>&1 || code=$?
    sed 's/^/  | /' "$WORK/out"
    echo "  exit code $code (expected $want)"
    [[ $code -eq $want ]] || failed=1
}

check 0 "runs as uid 10001" -- "${RUN[@]}" --entrypoint id "$IMAGE" -u
grep -qx 10001 "$WORK/out" || failed=1
check 0 "wikibot index" -- "${RUN[@]}" "$IMAGE" index --wiki /wiki
check 0 "wikibot ask" -- "${RUN[@]}" "$IMAGE" ask --wiki /wiki "/runbook glm"
check 1 "wikibot health without a heartbeat" -- "${RUN[@]}" "$IMAGE" health --config /config/config.yaml
grep -q "^unhealthy:" "$WORK/out" || failed=1
check 0 "HTTP/2 is there for wiki.http2 (h2 installed), bytecode compiled" -- "${RUN[@]}" \
    --entrypoint python3 "$IMAGE" -c '
import importlib.util, pathlib, sys
from knowledge.source.http import h2_installed
import whoosh
cached = importlib.util.cache_from_source(whoosh.__file__)
print("h2:", h2_installed(), "| whoosh bytecode:", pathlib.Path(cached).is_file())
sys.exit(0 if h2_installed() and pathlib.Path(cached).is_file() else 1)'
check 0 "the wiki is read-only inside, /data belongs to the bot" -- "${RUN[@]}" \
    --entrypoint sh "$IMAGE" -c 'touch /wiki/x 2>/dev/null && echo writable || echo read-only; ls -ldn /data'
grep -q writable "$WORK/out" && failed=1
check 0 "no test code in the image" -- "${RUN[@]}" --entrypoint python3 "$IMAGE" -c '
import importlib.util, pathlib, sys
site = [pathlib.Path(p) for p in sys.path if p.endswith("site-packages")]
found = [str(f) for s in site for name in ("tests", "benchmarks", "knowledge", "bot", "templates")
         for f in (s / name).rglob("*") if name in ("tests", "benchmarks")
         or f.name.startswith("test_") or f.name == "conftest.py" or "standin" in f.name]
print("test files:", found or "none")
sys.exit(1 if found or importlib.util.find_spec("tests") else 0)'

say "docker stop of the bot connected to a Discord stand-in (tini PID 1, --read-only)"
echo "\$ .venv/bin/python scripts/docker_stop_check.py $IMAGE $WIKI"
.venv/bin/python scripts/docker_stop_check.py "$IMAGE" "$WIKI" || failed=1

say "image size"
docker image inspect --format '{{.Size}}' "$IMAGE" \
    | awk '{printf "%s: %.1f MB (%d bytes)\n", "'"$IMAGE"'", $1 / 1e6, $1}'
docker image inspect --format '{{.Size}}' "$BASE" \
    | awk '{printf "base %s: %.1f MB\n", "'"$BASE"'", $1 / 1e6}'

if [[ $failed -ne 0 ]]; then
    say "docker-smoke: FAILED"
    exit 1
fi
say "docker-smoke: all checks passed"
