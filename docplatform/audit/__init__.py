"""The audit log: one row for every change of who may do what and every change an
integration makes (DESIGN.md, "Teams and roles")."""
