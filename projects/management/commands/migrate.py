"""`migrate` as the tables' owner (DATABASE_OWNER_URL when set), then the application's role gets the rows
of every table (core.rls.roles): the role the application connects as never owns what it reads."""

from django.core.management.commands.migrate import Command as MigrateCommand
from django.db import connections

from core.rls.roles import as_owner, grant_app_role


class Command(MigrateCommand):
    def handle(self, *args, **options):
        connection = connections[options["database"]]
        with as_owner(connection):
            super().handle(*args, **options)
            grant_app_role(connection)
