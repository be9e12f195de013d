# feltd server image. Untested against a live Docker engine (none runs on our build machines);
# tests/test_deploy_files.py checks its shape.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    FELTD_HOST=0.0.0.0 \
    FELTD_PORT=8765 \
    FELTD_DATA_DIR=/var/lib/feltd

RUN groupadd --system feltd && useradd --system --gid feltd --home-dir /var/lib/feltd feltd \
    && mkdir -p /var/lib/feltd && chown feltd:feltd /var/lib/feltd

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY protocol ./protocol
COPY server ./server
COPY client ./client
RUN pip install --no-cache-dir .

USER feltd
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import os, socket; socket.create_connection(('127.0.0.1', int(os.environ['FELTD_PORT'])), 2).close()"
CMD ["feltd", "serve"]
