"""Layer 3 of seed 000: user and project profiles aggregated from memory items."""

from django.db import models

from projects.models import Organization, Project


class UserProfile(models.Model):
    """A subject's profile; fields a person edited are listed in edited_fields and left alone."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=255)
    username = models.CharField(max_length=200, blank=True, default="")
    background = models.TextField(blank=True, default="")
    profession = models.CharField(max_length=200, blank=True, default="")
    communication_style = models.CharField(
        max_length=20, blank=True, default=""
    )  # concise/detailed/technical
    response_format = models.CharField(max_length=20, blank=True, default="")  # markdown/plain/code
    language_preference = models.CharField(max_length=20, blank=True, default="")
    characteristics = models.JSONField(default=list, blank=True)
    content = models.TextField(blank=True, default="")  # custom instructions
    expertise_areas = models.JSONField(default=list, blank=True)
    programming_languages = models.JSONField(default=list, blank=True)
    frequently_used_tools = models.JSONField(default=list, blank=True)
    edited_fields = models.JSONField(default=list, blank=True)
    sources = models.JSONField(default=dict, blank=True)  # field -> ids of the memories it came from
    aggregated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "user_id"], name="uniq_user_profile"),
            models.UniqueConstraint(fields=["id", "org"], name="profiles_userprofile_id_org"),
        ]

    def __str__(self) -> str:
        return f"profile of {self.user_id}"


class ProjectProfile(models.Model):
    """A project's shared profile (goal, stack, constraints, decisions, conventions, phase)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, related_name="profile", db_constraint=False
    )
    project_goal = models.TextField(blank=True, default="")
    tech_stack = models.JSONField(default=list, blank=True)
    constraints = models.JSONField(default=list, blank=True)
    key_decisions = models.JSONField(default=list, blank=True)  # [{decision, reason, date}]
    team_conventions = models.JSONField(default=list, blank=True)
    current_phase = models.CharField(max_length=200, blank=True, default="")
    edited_fields = models.JSONField(default=list, blank=True)
    sources = models.JSONField(default=dict, blank=True)  # field -> ids of the memories it came from
    aggregated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="profiles_projectprofile_id_org")]

    def __str__(self) -> str:
        return f"profile of {self.project}"


class ProfileRevision(models.Model):
    """History of profile changes (by aggregation or by a person)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    actor = models.CharField(max_length=255, blank=True, default="")  # "aggregation" or the person
    changes = models.JSONField(default=dict)  # field -> [before, after]
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="profiles_profilerevision_id_org")]

    def __str__(self) -> str:
        return f"profile change {self.pk}"
