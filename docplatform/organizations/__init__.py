"""Organizations by their people: started by a person, set by its admins."""
