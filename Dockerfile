# wikibot: the Discord bot for the RTX PRO 6000 Blackwell field wiki.
#   docker compose up -d          (compose.yaml and .env.example: the way to run it)
#   docker build -t wikibot .
#   docker run -d --name wikibot -e DISCORD_TOKEN -e GITHUB_TOKEN \
#     -v "$PWD/config.yaml:/config/config.yaml:ro" -v wikibot-data:/data wikibot
# (config with wiki.source: the bot fetches the wiki into /data; with wiki.path: /wiki,
# add -v "$PWD/rtx6kpro:/wiki:ro")
#
# Build arguments (`make docker-smoke` passes the first two when it must):
# - BASE: any Debian-like image with python3 (3.11, as requirements.lock was resolved
#   for) and its venv module. The default is pinned by digest, so a rebuild gets the
#   same base; to move it: `docker buildx imagetools inspect python:3.11-slim-bookworm`
#   and paste the new digest. The digest below is the multi-arch index that Docker's
#   official-images record (github.com/docker-library/repo-info, file
#   repos/python/remote/3.11-slim-bookworm.md at commit 40cdaf34) lists for the tag's
#   build of 19 Sep 2026 (Python 3.11.16); compare it there when Hub cannot be reached.
#   Where Docker Hub cannot be reached, docker-smoke builds
#   `wikibot-base:bookworm-python3` from Debian's own python3 with debootstrap and passes
#   `--build-arg BASE=wikibot-base:bookworm-python3`.
# - WHEELHOUSE: a folder of wheels made on the host (`pip wheel --require-hashes -r
#   requirements.lock -w .wheelhouse`), for builds that cannot reach the package index;
#   docker-smoke passes `--build-arg WHEELHOUSE=.wheelhouse` then.
# The dependencies come from requirements.lock (exact versions and their hashes, made
# by pip-compile from pyproject.toml; see README), so the image is reproducible.
ARG BASE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# A folder of wheels built on the host, for builds that cannot reach the package
# index: `--build-arg WHEELHOUSE=.wheelhouse` installs from it with --no-index.
ARG WHEELHOUSE=
RUN python3 -m venv /opt/wikibot
WORKDIR /src
# Dependencies first, so code changes do not reinstall them: exactly the versions and
# hashes of requirements.lock, with the http2 extra (h2: `wiki.http2: true` works).
COPY requirements.lock ./
COPY ${WHEELHOUSE:-requirements.lock} /wheelhouse/
RUN /opt/wikibot/bin/pip install --require-hashes --no-deps \
        ${WHEELHOUSE:+--no-index --find-links /wheelhouse} -r requirements.lock
COPY pyproject.toml README.md LICENSE ./
COPY knowledge knowledge
COPY bot bot
COPY templates templates
COPY wikibot wikibot
# The wheel holds bot/, knowledge/ and templates/ only: no tests reach the image.
# Bytecode is compiled here, once (the bot cannot write it at run time): without it
# the bot and each helper process it starts (page parsing, index builds) compiled every
# module they import from source on every start, about 0.5 s for Whoosh alone.
RUN /opt/wikibot/bin/pip install --no-deps ${WHEELHOUSE:+--no-index --find-links /wheelhouse} . \
    && /opt/wikibot/bin/pip uninstall -y pip setuptools wheel \
    && find /opt/wikibot -name __pycache__ -prune -exec rm -rf {} + \
    && /opt/wikibot/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash \
        /opt/wikibot/lib

FROM ${BASE}
# tini as PID 1: it passes SIGTERM (docker stop) to the bot, which then stops cleanly
# (bot/shutdown.py), and reaps any orphaned child; `docker run --init` is not needed.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    WIKIBOT_DATA=/data \
    PATH=/opt/wikibot/bin:$PATH
COPY --from=build /opt/wikibot /opt/wikibot
RUN useradd --create-home --uid 10001 wikibot \
    && mkdir -p /data /wiki /config \
    && chown wikibot:wikibot /data
USER 10001
WORKDIR /home/wikibot
# The fetched wiki, index, parsed-page cache and heartbeat live here: keep it on a volume.
VOLUME ["/data"]
HEALTHCHECK --interval=60s --timeout=10s --start-period=120s --retries=3 \
    CMD ["wikibot", "health", "--config", "/config/config.yaml"]
# The bot stops within 7 s of SIGTERM (its work in flight is given that long), inside
# Docker's default 10 s; compose.yaml gives it 20 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "wikibot"]
CMD ["serve", "--config", "/config/config.yaml"]
