"""Print the SQL that turns this database's tables into a Citus cluster's, distributed by org_id
(core.distribution.plan; docs/scaling.md). It prints only: nothing here runs Citus."""

from django.core.management.base import BaseCommand
from django.db import connection

from core.distribution import plan


class Command(BaseCommand):
    help = "Print the SQL that distributes the tenant tables by org_id on a Citus cluster (prints only)."

    def handle(self, *args, **options):
        with connection.cursor() as cursor:
            prepare, distribute = plan(cursor)
        self.stdout.write("-- 1. On PostgreSQL, as the tables' owner: unique keys that hold org_id.")
        self.stdout.write("BEGIN;")
        for statement in prepare:
            self.stdout.write(statement)
        self.stdout.write("COMMIT;")
        self.stdout.write("-- 2. On the Citus coordinator (CREATE EXTENSION citus; workers added): reference")
        self.stdout.write(
            "--    tables, then every tenant table distributed by org_id in one co-location group."
        )
        for statement in distribute:
            self.stdout.write(statement)
