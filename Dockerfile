# wikibot: the Discord bot for the RTX PRO 6000 Blackwell field wiki.
#   docker build -t wikibot .
#   docker run -d --name wikibot -e DISCORD_TOKEN -e GITHUB_TOKEN \
#     -v "$PWD/config.yaml:/config/config.yaml:ro" -v wikibot-data:/data wikibot
# (config with wiki.source: the bot fetches the wiki into /data; with wiki.path: /wiki,
# add -v "$PWD/rtx6kpro:/wiki:ro")
# BASE is any Debian-like image with python3 (3.11+) and its venv module;
# `make docker-smoke` builds and checks the image (see README).
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# A folder of wheels built on the host, for builds that cannot reach the package
# index: `--build-arg WHEELHOUSE=.wheelhouse` installs from it with --no-index.
ARG WHEELHOUSE=
RUN python3 -m venv /opt/wikibot
WORKDIR /src
# Dependencies first, so code changes do not reinstall them.
COPY pyproject.toml README.md ./
COPY knowledge/__init__.py knowledge/
COPY bot/__init__.py bot/
COPY templates/__init__.py templates/
COPY ${WHEELHOUSE:-pyproject.toml} /wheelhouse/
# With the http2 extra (h2): `wiki.http2: true` fetches over HTTP/2 in the image.
RUN /opt/wikibot/bin/pip install ${WHEELHOUSE:+--no-index --find-links /wheelhouse} '.[http2]' \
    && /opt/wikibot/bin/pip uninstall -y rtx6k-wikibot
COPY knowledge knowledge
COPY bot bot
COPY templates templates
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
ENTRYPOINT ["wikibot"]
CMD ["serve", "--config", "/config/config.yaml"]
