# websearch-mcp in a container. Build: docker build -t websearch-mcp .
# Run with compose.yaml (tokens and API keys from .env); see README, "Docker".

# --- build: install the package and its extras into a virtualenv ------------------------------
FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY websearch_mcp ./websearch_mcp
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir ".[redis,pdf]" \
    && /opt/venv/bin/pip uninstall -y pip setuptools

# --- run: the virtualenv only, as an unprivileged user, with no installer --------------------
FROM python:3.11-slim
LABEL org.opencontainers.image.title="websearch-mcp" \
      org.opencontainers.image.description="One MCP search tool: many engines fused, de-duplicated and explained" \
      org.opencontainers.image.licenses="MIT"
# Inside the container the server listens on every interface, so it starts only with bearer
# tokens (WEBSEARCH_MCP_TOKENS) or WEBSEARCH_MCP_SERVER__ALLOW_ANONYMOUS=true. The cache lives
# in /data (XDG_DATA_HOME); a config file may be mounted under /config and named by
# WEBSEARCH_MCP_CONFIG=/config/websearch-mcp.yaml.
ENV PATH="/opt/venv/bin:${PATH}" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    XDG_DATA_HOME=/data \
    WEBSEARCH_MCP_SERVER__HOST=0.0.0.0 \
    WEBSEARCH_MCP_SERVER__WORKERS=auto \
    WEBSEARCH_MCP_SERVER__LOG_FORMAT=json
# The base image's own pip, setuptools and wheel are not needed to run (the virtualenv has
# none either: nothing is installed at run time).
RUN python -m pip uninstall -y --root-user-action=ignore pip setuptools wheel \
    && useradd --system --no-log-init --uid 10001 --user-group --home-dir /data \
        --shell /usr/sbin/nologin websearch \
    && mkdir -p /data /config \
    && chown websearch:websearch /data
COPY --from=build /opt/venv /opt/venv
USER 10001:10001
WORKDIR /data
VOLUME ["/data", "/config"]
EXPOSE 8338
# The slim image has no curl: the probe is Python's own HTTP client, without proxies (the
# HTTP_PROXY an operator sets for the engines cannot reach this container's 127.0.0.1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:%s/healthz' % os.environ.get('WEBSEARCH_MCP_SERVER__PORT', '8338'), timeout=4)"]
ENTRYPOINT ["websearch-mcp"]
CMD ["serve"]
