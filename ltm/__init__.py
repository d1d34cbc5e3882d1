"""LongTermMemory core: the scoped memory service and everything below it.

Components under `components/` are thin adapters: they turn a LangBot turn into an
`Identity`, call `MemoryService`, and render the result. Nothing in this package
knows about chat formatting or HTML.
"""
