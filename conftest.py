"""Repository-wide pytest configuration (applies to tests/, notebooks/ and solutions/)."""

pytest_plugins = ["course.nbval_plugin"]

# Notebooks that tests/ run on purpose, with outputs that must fail; never collect them.
collect_ignore_glob = ["tests/fixtures/*"]
