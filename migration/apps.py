from django.apps import AppConfig


class MigrationConfig(AppConfig):
    default_auto_field = 'django.db.models.BigAutoField'
    name = 'migration'
