"""scipy's own signal tests run against the operators of the same name (see plugin.py)."""
