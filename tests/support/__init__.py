"""What several test areas share: fakes, scripted models, helpers (docs/architecture.md, Tests)."""
