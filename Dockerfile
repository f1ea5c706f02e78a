# Claimscope: one image for web (gunicorn), Celery worker and Celery beat.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 claimscope \
    && useradd --system --uid 10001 --gid claimscope --home-dir /app --shell /usr/sbin/nologin claimscope

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY --chown=claimscope:claimscope . .
# PYTHONDONTWRITEBYTECODE keeps the running containers from writing bytecode: compile the
# project once here, or every process compiles its modules again as it starts (about 0.2 s).
RUN python -m compileall -q config inventory claims migration devtools manage.py
# Static files (htmx, plotly.js, CSS) are collected into the image and served by whitenoise.
# The key below exists only for this build step; it is not in the final environment.
RUN SECRET_KEY=collectstatic-build-only DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    python manage.py collectstatic --noinput -v0 \
    && rm -rf /app/var && mkdir -p /app/var && chown claimscope:claimscope /app/var

USER 10001:10001
EXPOSE 8000
# No HEALTHCHECK here: the same image runs worker and beat; compose and Kubernetes define
# a check per role (web: /healthz and /readyz, worker: celery ping, beat: schedule file).
CMD ["gunicorn", "config.wsgi:application", "--bind=0.0.0.0:8000", "--workers=2", "--threads=4", \
     "--worker-tmp-dir=/dev/shm", "--access-logfile=-", "--timeout=60"]
