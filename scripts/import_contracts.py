"""Import-linter contract types the built-in ones cannot express.

No import of a private module:

    [[tool.importlinter.contracts]]
    type = "private_modules"
    source_modules = ["components"]
    private_in = ["ltm"]

is broken by any import, direct, from a module of `source_modules` of a module under one of the
`private_in` packages whose own name, or any package on its path, starts with "_" (`ltm._gate`,
`ltm.x._y`; `__init__` does not count). A new private module needs no new line in the contract.
Registered in `pyproject.toml` (`contract_types`); `lint-imports` runs from the repository root,
which it puts on `sys.path`.
"""

from __future__ import annotations

from typing import Any

from importlinter import Contract, ContractCheck, fields, output


def is_private(module: str, roots: set[str]) -> bool:
    parts = module.split(".")
    if parts[0] not in roots:
        return False
    return any(part.startswith("_") and not part.startswith("__") for part in parts[1:])


class PrivateModulesContract(Contract):
    source_modules = fields.ListField(subfield=fields.StringField())
    private_in = fields.ListField(subfield=fields.StringField())

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        # Contract sets each field to the parsed option value.
        roots = {str(root) for root in self.private_in}
        sources = [str(s) for s in self.source_modules]
        found: list[dict[str, object]] = []
        for source in sources:
            modules = {source} | set(graph.find_descendants(source))
            for importer in sorted(modules):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if is_private(imported, roots):
                        lines = [d["line_number"] for d in graph.get_import_details(importer=importer,
                                                                                     imported=imported)]
                        found.append({"importer": importer, "imported": imported, "lines": lines})
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["found"]:
            lines = ", ".join(f"l.{n}" for n in item["lines"])
            output.print_error(f"{item['importer']} imports the private module {item['imported']} ({lines})")
            output.new_line()


class OnlyImportersContract(Contract):
    """A module only the listed modules may import, directly or not (the built-in `forbidden` type
    cannot express "everyone but these" inside one package):

        [[tool.importlinter.contracts]]
        type = "only_importers"
        modules = ["ltm._bookkeeping"]
        importers = ["ltm._gate", "ltm.parts"]

    is broken by a direct import of one of `modules` by any module not listed (a listed importer that
    re-exported the module's names would defeat it: the listed ones are few and reviewed for that)."""

    modules = fields.ListField(subfield=fields.StringField())
    importers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        allowed = {str(m) for m in self.importers}
        found: list[dict[str, object]] = []
        for module in (str(m) for m in self.modules):
            for importer in sorted(graph.find_modules_that_directly_import(module)):
                if importer in allowed or importer == module:
                    continue
                lines = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=module)]
                found.append({"importer": importer, "imported": module, "lines": lines})
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["found"]:
            lines = ", ".join(f"l.{n}" for n in item["lines"])
            output.print_error(f"{item['importer']} imports {item['imported']} ({lines}), which only "
                               "the modules listed in the contract may import")
            output.new_line()
