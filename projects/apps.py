from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"

    def ready(self):
        from . import replica_pins
        from .api.choices import list_valid_choices

        list_valid_choices()
        replica_pins.connect()
