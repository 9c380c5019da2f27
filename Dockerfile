# wikibot: the Discord bot for the RTX PRO 6000 Blackwell field wiki.
#   docker build -t wikibot .
#   docker run -d --name wikibot -e DISCORD_TOKEN \
#     -v "$PWD/config.yaml:/config/config.yaml:ro" -v "$PWD/rtx6kpro:/wiki:ro" \
#     -v wikibot-data:/data wikibot
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    WIKIBOT_DATA=/data

WORKDIR /app
# Dependencies first, so code changes do not reinstall them.
COPY pyproject.toml README.md ./
COPY knowledge/__init__.py knowledge/
COPY bot/__init__.py bot/
COPY templates/__init__.py templates/
RUN pip install . && pip uninstall -y rtx6k-wikibot
COPY knowledge knowledge
COPY bot bot
COPY templates templates
RUN pip install --no-deps . \
    && useradd --create-home --uid 10001 wikibot \
    && mkdir -p /data /wiki /config \
    && chown wikibot:wikibot /data

USER wikibot
# The index, parsed-page cache and heartbeat live here: keep it on a volume.
VOLUME ["/data"]
HEALTHCHECK --interval=60s --timeout=10s --start-period=120s --retries=3 \
    CMD ["wikibot", "health", "--config", "/config/config.yaml"]
ENTRYPOINT ["wikibot"]
CMD ["serve", "--config", "/config/config.yaml"]
