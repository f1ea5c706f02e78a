"""docker-compose.yml: the whole stack from one image, gated on a one-shot migrate, health-checked."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_stack_has_every_service():
    assert set(_compose()["services"]) == {"db", "redis", "migrate", "web", "worker", "beat", "watcher", "prometheus"}


def test_web_worker_beat_and_migrate_share_one_image_built_here():
    s = _compose()["services"]
    images = {s[n]["image"] for n in ("web", "worker", "beat", "migrate")}
    assert len(images) == 1
    assert all(s[n]["build"] == "." for n in ("web", "worker", "beat", "migrate"))


def test_commands_run_gunicorn_celery_worker_beat_and_migrations():
    s = _compose()["services"]
    assert s["web"]["command"][:2] == ["gunicorn", "config.wsgi:application"]
    assert s["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]
    assert s["beat"]["command"][:4] == ["celery", "-A", "config", "beat"]
    migrate = " ".join(s["migrate"]["command"])
    assert "manage.py migrate" in migrate and "ensure_roles" in migrate
    assert s["migrate"]["restart"] == "no"


def test_app_services_wait_for_a_successful_migrate_and_healthy_backends():
    s = _compose()["services"]
    for name in ("web", "worker", "beat"):
        dep = s[name]["depends_on"]
        assert dep["migrate"] == {"condition": "service_completed_successfully"}, name
        assert dep["db"]["condition"] == dep["redis"]["condition"] == "service_healthy", name
    assert s["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"


def test_every_long_running_service_has_a_health_check():
    s = _compose()["services"]
    for name, svc in s.items():
        if name == "migrate":
            continue
        assert svc["healthcheck"]["test"], name
    assert "/healthz" in " ".join(s["web"]["healthcheck"]["test"])


def test_settings_come_from_an_env_file_whose_example_is_committed():
    s = _compose()["services"]
    for name in ("web", "worker", "beat", "migrate"):
        assert s[name]["env_file"] == ".env"
    example = (ROOT / ".env.example").read_text()
    keys = {line.split("=", 1)[0] for line in example.splitlines() if "=" in line and not line.startswith("#")}
    assert {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "ALLOWED_HOSTS", "POSTGRES_PASSWORD"} <= keys
    assert "web" in next(line for line in example.splitlines() if line.startswith("ALLOWED_HOSTS=")), \
        "Prometheus scrapes web:8000 with Host: web"


def test_prometheus_scrapes_the_web_service_and_loads_the_rules():
    s = _compose()["services"]["prometheus"]
    mounts = {m.split(":")[0]: m.split(":")[1] for m in s["volumes"]}
    assert mounts["./deploy/prometheus/prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    conf = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    assert mounts["./deploy/prometheus/claimscope-rules.yml"] in conf["rule_files"]
    (job,) = conf["scrape_configs"]
    assert job["job_name"] == "claimscope" and job["static_configs"][0]["targets"] == ["web:8000"]


def test_the_dockerfile_runs_as_a_non_root_user_and_collects_static():
    text = (ROOT / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    assert "pip install -r requirements.txt" in text and "collectstatic" in text
    user = [line for line in text.splitlines() if line.startswith("USER ")][-1]
    assert user.split()[1].split(":")[0] not in ("root", "0")
    assert '"gunicorn"' in next(line for line in text.splitlines() if line.startswith("CMD"))
