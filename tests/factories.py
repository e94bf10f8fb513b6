import factory
from django.contrib.auth import get_user_model

from projects.models import Organization, OrgMembership, Project


class AccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-engram")


class OrgFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"org{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())


class OrgMembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OrgMembership

    org = factory.SubFactory(OrgFactory)
    account = factory.SubFactory(AccountFactory)
    role = "member"
    user_id = factory.LazyAttribute(lambda m: m.account.username)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    org = factory.SubFactory(OrgFactory)
    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
