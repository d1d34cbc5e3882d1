"""Platform events (X in docs/REQUIREMENTS.md): a recalled message's memory taken back, a member who leaves
erased, a deleted bot's memory moved; docs/ARCHITECTURE.md, "Platform events"."""
