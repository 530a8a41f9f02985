"""The audit log's page: ``/orgs/<subdomain>/audit-log/``."""

from django.urls import path

from . import views

app_name = "audit"

urlpatterns = [
    path("<slug:organization>/audit-log/", views.AuditLogPage.as_view(), name="audit-log"),
]
