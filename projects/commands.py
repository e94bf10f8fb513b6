"""A base for management commands that rewrite stored rows chunk by chunk, for every org or one."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from .models import Organization


class RowRewriteCommand(BaseCommand):
    """--org SLUG (only that organization), --chunk N (rows per transaction), --dry-run (count only)."""

    def add_arguments(self, parser):
        parser.add_argument("--org", default="", help="only this organization (slug)")
        parser.add_argument("--chunk", type=int, default=500, help="rows per transaction (default 500)")
        parser.add_argument("--dry-run", action="store_true", help="count the rows that would change")

    def handle(self, *args, org: str, chunk: int, dry_run: bool, **options):
        if chunk < 1:
            raise CommandError("--chunk must be at least 1.")
        found = None
        if org:
            found = Organization.objects.filter(slug=org).first()
            if found is None:
                raise CommandError(f"No organization with the slug {org!r}.")
        self.rewrite(org=found, chunk=chunk, dry_run=dry_run)

    def rewrite(self, *, org: Organization | None, chunk: int, dry_run: bool) -> None:
        raise NotImplementedError
