"""Memory Console page (M1-M3 in docs/REQUIREMENTS.md)."""
