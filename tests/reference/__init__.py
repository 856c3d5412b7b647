"""References that the tests compare specscope with, run outside the project venv."""
