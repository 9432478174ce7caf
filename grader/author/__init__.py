"""What a course author runs: student notebooks from solutions (assign), the selftest of a course's
checks, bundles and CI templates (export), the config reference."""
