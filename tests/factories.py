import factory
from django.contrib.auth import get_user_model

from core.text import content_hash
from memory.drafts import tokens_expression
from memory.embeddings import provider_for
from memory.models import MemoryItem, MemoryType, Scope
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


class MemoryItemFactory(factory.django.DjangoModelFactory):
    """A memory row as the write path stores it (hash, search tokens), without the gate, dedup or revisions.

    For tests that need rows. A test of writing itself (gate, dedup, revisions, the memories_changed
    signal) calls memory_create. A user memory of alice unless told otherwise; with a project, a project
    memory of nobody in particular. No embedding unless `embedded=True` (the content embedded by the
    subject's provider, as the write path does) or an `embedding` is given."""

    class Meta:
        model = MemoryItem

    class Params:
        embedded = factory.Trait(
            embedding=factory.LazyAttribute(
                lambda m: provider_for(m.org, m.user_id).embed_passages([m.content])[0]
            )
        )

    project = None
    org = factory.Maybe("project", factory.SelfAttribute("project.org"), factory.SubFactory(OrgFactory))
    scope = factory.LazyAttribute(lambda m: Scope.PROJECT if m.project else Scope.USER)
    user_id = factory.LazyAttribute(lambda m: "" if m.scope == Scope.PROJECT else "alice")
    content = factory.Sequence(lambda n: f"The user wrote down note number {n}")
    content_hash = factory.LazyAttribute(lambda m: content_hash(m.content))
    memory_type = MemoryType.FACT
    embedding = None
    # A vector given without a model is taken to be of the subject's provider.
    embedding_model = factory.LazyAttribute(
        lambda m: "" if m.embedding is None else provider_for(m.org, m.user_id).model_name
    )

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        item = model_class(*args, **kwargs)
        item.search_tokens = tokens_expression(item.content)
        item.save()
        item.__dict__.pop("search_tokens", None)  # stored: a later save() must not write the expression again
        return item
