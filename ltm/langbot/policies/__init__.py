"""How one vector store is driven, as small policy objects chosen once per collection from what the
probe learned (`store_probe.Traits`, `choose.py`): how a row's score reads, how a speaker's records
are searched, whether full-text search is asked, how records are read by key, deleted and rewritten.
One decision per file, each choice a small class; a store that needs a choice no class makes gets
one class in its decision's file (or a new file for a new decision) and one line in `choose.py`
(docs/ARCHITECTURE.md, "Where a new feature goes")."""
