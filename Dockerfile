# Self-hosting the Speculative Decoding Lab (see docs/HOSTING.md).
#   docker build -t specdec-lab .
#   docker run --rm -p 8501:8501 specdec-lab      # then open http://localhost:8501
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OPENBLAS_NUM_THREADS=1

WORKDIR /app

# Dependencies first, so that a code change does not reinstall them.
COPY requirements.txt .
RUN pip install -r requirements.txt

# The app itself (see .dockerignore for what stays out), run as an unprivileged user.
RUN useradd --create-home --uid 10001 lab
COPY --chown=lab:lab . .
USER lab

EXPOSE 8501

# /_stcore/health answers "ok" once the server is up. python:3.11-slim has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status == 200 else 1)"

# .streamlit/config.toml (copied above) keeps XSRF on, error details off, uploads tiny.
CMD ["streamlit", "run", "app.py", \
     "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", \
     "--server.fileWatcherType=none", "--browser.gatherUsageStats=false"]
