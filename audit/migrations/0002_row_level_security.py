"""Row-level security on the audit log (core.rls): an event is there only for its own org's scope."""

from django.db import migrations

from core.rls import tenant_policy


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunSQL(*tenant_policy("audit_auditevent"))]
