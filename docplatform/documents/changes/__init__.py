"""Change requests (DESIGN.md, "Content"): a branch of a space's content, reviewed, then
merged onto the space with the three-way merge, as one revision."""
