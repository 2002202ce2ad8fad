"""Maintenance tools that are not part of the course or of mini_autograd."""
