from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    """Registers the developer commands; no models, no after-sync hook."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "devtools"
    verbose_name = "Developer tools"
