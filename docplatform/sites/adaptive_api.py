"""REST API of a site's adaptive content (README, "Adaptive content"): the claim names its
conditions read and each condition with where it applies, for an integration that supplies
or reads visitors' claims.

An installation token needs ``site:adaptive:read`` and reaches the sites its installation
covers; the organization's people (any role: they read every page and condition in the
reader already) read it too; anyone else gets 404.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import Action
from ..api.lookup import sites_for
from ..api.permissions import ActsByRole
from . import selectors as site_selectors


class AdaptiveConditionOutput(serializers.Serializer):
    space = serializers.CharField(help_text="The space of the page.")
    path = serializers.CharField(help_text="The page's path.")
    section = serializers.IntegerField(
        required=False,
        help_text="The page's n-th adaptive section (from 1); absent: the page's own condition.",
    )
    condition = serializers.CharField(help_text='As written, e.g. visitor.claims.plan == "pro".')


class AdaptiveOutput(serializers.Serializer):
    claims = serializers.ListField(
        child=serializers.CharField(),
        help_text="The claim names the conditions read (visitor.claims.<name>), sorted; a "
        "nested claim is dotted (org.plan).",
    )
    conditions = AdaptiveConditionOutput(many=True)


class SiteAdaptiveApi(APIView):
    """The adaptive content of a site: across the current revisions of the spaces its
    visitors may open, in the site's order."""

    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}
    installation_scopes = {"GET": "site:adaptive:read"}

    @extend_schema(
        summary="Read a site's claim names and conditions",
        responses=AdaptiveOutput,
        examples=[
            OpenApiExample(
                "A page for pro plans and a section for admins",
                value={
                    "claims": ["plan", "role"],
                    "conditions": [
                        {
                            "space": "Sp3hJ8vQe5WnZa2KdR6t",
                            "path": "pro/reports",
                            "condition": 'visitor.claims.plan in ["pro", "team"]',
                        },
                        {
                            "space": "Sp3hJ8vQe5WnZa2KdR6t",
                            "path": "install",
                            "section": 1,
                            "condition": 'visitor.claims.role == "admin"',
                        },
                    ],
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, site_id):
        site = get_object_or_404(sites_for(request), pk=site_id)
        self.check_object_permissions(request, site)
        return Response(AdaptiveOutput(site_selectors.adaptive_outline(site)).data)
