"""Griffe extension for the API reference: `srcgrad.<name>` is the public
object, even where a submodule has the same name.

`srcgrad/__init__.py` does `from .function import function`: at run time
`srcgrad.function` is the decorator, but Griffe's static analysis keeps
the submodule under that name (a known Griffe limitation), so
`::: srcgrad.function` would render the module. For every name of
`srcgrad.__all__` that Griffe resolved to a submodule, this extension
points the name at the submodule's member of the same name, which is what
Python's import gives, without naming any internal module in the docs.
"""
from griffe import Alias, Extension


class PublicNames(Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "srcgrad":
            return
        for name in sorted(pkg.exports or ()):
            member = pkg.members.get(name)
            if member is None or not member.is_module:
                continue
            inner = member.members.get(name)
            if inner is None:
                continue
            pkg.members[name] = Alias(name, inner, parent=pkg)
