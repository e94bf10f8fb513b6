"""Stored answers of writes sent with an Idempotency-Key (projects.idempotency), under row-level security."""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

from core.rls import tenant_policy


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0002_org_api_rate_members_set_embedding'),
    ]

    operations = [
        migrations.CreateModel(
            name='IdempotencyKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('principal', models.CharField(max_length=64)),
                ('key', models.CharField(max_length=255)),
                ('fingerprint', models.CharField(max_length=64)),
                ('status_code', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('body', models.TextField(blank=True, default='')),
                ('headers', models.JSONField(blank=True, default=dict)),
                ('subjects', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=255), blank=True, default=list, size=None)),
                ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ('org', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='projects.organization')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('org', 'principal', 'key'), name='uniq_idempotency_key')],
            },
        ),
        migrations.RunSQL(*tenant_policy("projects_idempotencykey")),
    ]
