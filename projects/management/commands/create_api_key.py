from django.core.management.base import BaseCommand, CommandError

from projects.models import Organization
from projects.services import api_key_create


class Command(BaseCommand):
    help = "Create an org API key; the secret is printed once, as the last line of stdout."

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--read-only", action="store_true")
        parser.add_argument(
            "--project", action="append", default=[], help="restrict to a project slug (repeatable)"
        )

    def handle(self, *args, org, name, read_only, project, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"No organization {org!r}.")
        projects = list(organization.projects.filter(slug__in=project))
        if len(projects) != len(set(project)):
            raise CommandError("Unknown project slug.")
        key, secret = api_key_create(org=organization, name=name, read_only=read_only, projects=projects)
        self.stdout.write(f"created key {key.prefix} ({'read-only' if read_only else 'read-write'})")
        self.stdout.write(secret)
