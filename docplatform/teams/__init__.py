"""Teams: an organization's people, how they join (invitations), their roles, and the
organizations, spaces and sites they make themselves (DESIGN.md, "Teams and roles")."""
