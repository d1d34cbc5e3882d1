"""Migrations of what earlier releases stored, each idempotent and resumable.

- `storage`  plugin-storage keys of release 0.1 (joined with ":") moved to the escaped layout,
             once, before the first storage access of a process (`migrate_storage`);
- `layout`   vector records of record layout 1 rewritten in layout 2, once per memory KB, at its
             first use (`LayoutMigrations.ensure`).

Every key they read or write is built in `ltm/_storage.py`.
"""
