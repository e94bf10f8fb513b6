from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"

    def ready(self):
        from .api.choices import list_valid_choices

        list_valid_choices()
