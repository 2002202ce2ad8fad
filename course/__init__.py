"""Course tooling: notebook execution, the exercise generator, the exercise checker."""
