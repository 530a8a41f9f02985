import factory
from django.contrib.auth import get_user_model

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
    class Meta:
        model = Page

    revision = factory.SubFactory(RevisionFactory)
    path = factory.Sequence(lambda n: f"page-{n}")
    title = factory.Sequence(lambda n: f"Page {n}")
    body = "# Hello\n"


class SiteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Site

    organization = factory.SubFactory(OrganizationFactory)
    title = factory.Sequence(lambda n: f"Site {n}")
