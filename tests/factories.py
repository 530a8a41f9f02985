import factory
from django.contrib.auth import get_user_model
from django.db.models import F

from docplatform.models import Membership, Organization, Page, Revision, Site, Space


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("password")


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization
        django_get_or_create = ["subdomain"]

    subdomain = factory.Sequence(lambda n: f"org{n}")
    title = factory.LazyAttribute(lambda org: org.subdomain.title())


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    organization = factory.SubFactory(OrganizationFactory)
    user = factory.SubFactory(UserFactory)
    role = Membership.Role.MEMBER


class SpaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Space

    organization = factory.SubFactory(OrganizationFactory)
    title = factory.Sequence(lambda n: f"Space {n}")


class RevisionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Revision

    space = factory.SubFactory(SpaceFactory)
    message = "An edit"


class PageFactory(factory.django.DjangoModelFactory):
    """A page of ``revision`` (from it on), after the pages made before it."""

    class Meta:
        model = Page
        skip_postgeneration_save = True  # the hook writes the revision, not the page

    class Params:
        revision = factory.SubFactory(RevisionFactory)

    space = factory.LazyAttribute(lambda page: page.revision.space)
    valid_from = factory.LazyAttribute(lambda page: page.revision.number)
    position = factory.Sequence(lambda n: f"{n:08d}1")
    path = factory.Sequence(lambda n: f"page-{n}")
    title = factory.Sequence(lambda n: f"Page {n}")
    body = "# Hello\n"

    @factory.post_generation
    def counted(page, create, extracted, **kwargs):
        """The revision counts its pages (a write on top of it adds to that count)."""
        revision = Revision.objects.get(space=page.space, number=page.valid_from)
        Revision.objects.filter(pk=revision.pk).update(page_count=F("page_count") + 1)


class SiteFactory(factory.django.DjangoModelFactory):
    """A published site (``published=False`` for one that is not served)."""

    class Meta:
        model = Site

    organization = factory.SubFactory(OrganizationFactory)
    title = factory.Sequence(lambda n: f"Site {n}")
    published = True


def png_image(width: int = 64, height: int = 64) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (59, 91, 219)).save(buffer, format="PNG")
    return buffer.getvalue()


class IntegrationFactory(factory.django.DjangoModelFactory):
    """A published integration: it has a released version (``published=False`` for none),
    its listing that of the integration, offered to other organizations as published through
    the publish service and, when public, approved by an operator (``approved=False``: its
    review waits, and other organizations are offered nothing)."""

    class Meta:
        model = "integrations.Integration"
        django_get_or_create = ["name"]
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"integration-{n}")
    organization = factory.SubFactory(OrganizationFactory)
    title = factory.LazyAttribute(lambda integration: integration.name.replace("-", " ").title())
    description = "Does one useful thing."
    visibility = "public"
    scopes = factory.LazyFunction(lambda: ["space:content:read"])
    categories = factory.LazyFunction(lambda: ["other"])

    @factory.post_generation
    def published(integration, create, extracted, **kwargs):
        if create and extracted is not False and integration.latest_version_id is None:
            from integrations.services.releases import LISTING_FIELDS

            listing = {name: getattr(integration, name) for name in LISTING_FIELDS}
            version = IntegrationVersionFactory(integration=integration, listing=listing)
            integration.latest_version = integration.released_version = version
            integration.shared_version = version
            integration.save(update_fields=["latest_version", "released_version", "shared_version"])

    @factory.post_generation
    def approved(integration, create, extracted, **kwargs):
        """A public released version's review: approved unless ``approved=False``."""
        version = integration.released_version
        if not create or version is None or integration.visibility != "public":
            return
        if hasattr(version, "review"):
            return
        from integrations.models import ListingReview

        status = ListingReview.Status.PENDING if extracted is False else "approved"
        ListingReview.objects.create(version=version, status=status)
        if extracted is False:
            integration.shared_version = None
            integration.save(update_fields=["shared_version"])


class IntegrationVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "integrations.IntegrationVersion"

    integration = factory.SubFactory(IntegrationFactory, published=False)
    number = factory.Sequence(lambda n: n + 1)
    content_hash = factory.Sequence(lambda n: f"{n:064x}")
    manifest = factory.LazyAttribute(lambda version: {"name": version.integration.name})


class IntegrationAssetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "integrations.IntegrationAsset"

    version = factory.SubFactory(IntegrationVersionFactory)
    kind = "icon"
    path = "assets/icon.png"
    content_type = "image/png"
    content = factory.LazyFunction(png_image)
    width = 64
    height = 64
