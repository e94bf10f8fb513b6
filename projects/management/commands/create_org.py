from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from projects.services import org_create


class Command(BaseCommand):
    help = "Create an organization (tenant)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, name, **options):
        try:
            org = org_create(slug=slug, name=name)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages))
        self.stdout.write(f"created org {org.slug} (id {org.pk})")
