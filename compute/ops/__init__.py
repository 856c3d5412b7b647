"""Built-in signal operators, grouped by family."""
