"""``python manage.py ensure_roles``: create the groups viewer, operator and admin.

- viewer: ``view_*`` on every Claimscope model (pages only need a login; the admin needs these).
- operator: viewer + ``inventory.add_syncrun`` (the "Sync now" button) and, when the migration
  app has its Attestation model, ``migration.add_attestation`` (attest checklist items).
- admin: every permission of the Claimscope apps; make admins ``is_staff`` to reach /admin/.

Idempotent: re-running adds missing permissions and never removes ones added by hand. Run it
after ``migrate`` (the compose ``migrate`` service and the Kubernetes init container do).
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand

APPS = ("inventory", "claims", "migration")
OPERATOR_EXTRA = ("inventory.add_syncrun", "migration.add_attestation")


def _perms(query) -> list[Permission]:
    return list(Permission.objects.filter(query))


def role_permissions() -> dict[str, list[Permission]]:
    """Group name -> permissions, from the permissions that exist in this database."""
    from django.db.models import Q

    ours = Q(content_type__app_label__in=APPS)
    viewer = _perms(ours & Q(codename__startswith="view_"))
    extra = Q(pk__in=[])
    for dotted in OPERATOR_EXTRA:
        app_label, codename = dotted.split(".")
        extra |= Q(content_type__app_label=app_label, codename=codename)
    return {"viewer": viewer, "operator": viewer + _perms(extra), "admin": _perms(ours)}


class Command(BaseCommand):
    help = "Create or update the viewer, operator and admin groups."

    def handle(self, *args, **opts):
        for name, perms in role_permissions().items():
            group, created = Group.objects.get_or_create(name=name)
            group.permissions.add(*perms)
            self.stdout.write(f"{'created' if created else 'updated'} group {name}: {len(perms)} permissions")
