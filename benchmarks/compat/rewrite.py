"""The source transformation that turns a program written for autograd into
one written for srcgrad (done at run time, on a copy: autograd's code is
never stored in this repository).

    import autograd.numpy as np            ->  import numpy as np
    import autograd.numpy.random as npr    ->  import numpy.random as npr
    import autograd.scipy.stats.multivariate_normal as mvn
                                           ->  from scipy.stats import multivariate_normal as mvn
    from autograd.scipy.special import logsumexp
                                           ->  from scipy.special import logsumexp
    from autograd import grad, value_and_grad as vgrad
    from autograd.misc.optimizers import adam
    from autograd.test_util import check_grads
                                           ->  from benchmarks.compat.shim import ...
    import autograd.scipy.signal; autograd.scipy.signal.convolve(...)
                                           ->  import scipy.signal; import benchmarks.compat.shim;
                                               benchmarks.compat.shim.convolve(...)
    grad(f, argnum=1)                      ->  grad(f, wrt=1)     (grad is sg.grad)

Every rewritten statement keeps its line (several statements are joined
with "; "; a statement over several lines is padded with blank lines), so
the line numbers in srcgrad's messages are those of autograd's file.
Per-program `patches` (exact text replacements, each required to match a
stated number of times) are applied first, to both the autograd and the
srcgrad version: they are how the harness reduces iteration counts.
"""
import ast

SHIM = "benchmarks.compat.shim"

#: autograd modules whose public names the shim provides (all in one module)
SHIM_MODULES = {
    "autograd", "autograd.extend", "autograd.test_util", "autograd.misc", "autograd.misc.flatten",
    "autograd.misc.optimizers", "autograd.misc.fixed_points", "autograd.builtins", "autograd.tracer",
    "autograd.core", "autograd.wrap_util", "autograd.util", "autograd.differential_operators",
    "autograd.misc.tracers",
}

#: shim names that are srcgrad's own functions: their `argnum=` keyword is srcgrad's `wrt=`
SRCGRAD_DIRECT = {"grad", "value_and_grad", "elementwise_grad"}

#: single names mapped specially (autograd-only functions the shim implements)
SPECIAL = {
    "autograd.scipy.signal.convolve": SHIM + ".convolve",
    "autograd.scipy.misc.logsumexp": "scipy.special.logsumexp",
    # autograd.core's make_vjp/make_jvp take x itself (the ones in `autograd` take argnum)
    "autograd.core.make_vjp": SHIM + ".core_make_vjp",
    "autograd.core.make_jvp": SHIM + ".core_make_jvp",
}


def map_dotted(path):
    """The srcgrad-side dotted path for an autograd dotted path, or None
    when it is not autograd's."""
    if path in SPECIAL:
        return SPECIAL[path]
    if path == "autograd.numpy" or path.startswith("autograd.numpy."):
        return "numpy" + path[len("autograd.numpy"):]
    if path == "autograd.scipy" or path.startswith("autograd.scipy."):
        return "scipy" + path[len("autograd.scipy"):]
    if path in SHIM_MODULES:
        return SHIM
    parent, _, last = path.rpartition(".")
    if parent in SHIM_MODULES:
        return SHIM + "." + last
    if path == "autograd" or path.startswith("autograd."):
        return SHIM + "." + path.rpartition(".")[2]
    return None


def _import_text(target, alias):
    """Python that binds `alias` to the object at dotted `target`."""
    parent, _, last = target.rpartition(".")
    if not parent:
        return "import %s" % target if alias == target else "import %s as %s" % (target, alias)
    if last == alias:
        return "from %s import %s" % (parent, last)
    return "from %s import %s as %s" % (parent, last, alias)


class _Edits:
    def __init__(self, source):
        self.source = source
        self.data = source.encode("utf-8")
        self.starts = [0]
        for i, byte in enumerate(self.data):
            if byte == 0x0A:
                self.starts.append(i + 1)
        self.edits = []

    def offset(self, lineno, col):
        return self.starts[lineno - 1] + col

    def replace(self, node, text):
        """Replace `node`'s source by `text`, keeping the number of lines."""
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        extra = node.end_lineno - node.lineno
        self.edits.append((start, end, text + "\n" * extra if extra else text))

    def replace_span(self, start, end, text):
        self.edits.append((start, end, text))

    def apply(self):
        data = self.data
        for start, end, text in sorted(self.edits, reverse=True):
            data = data[:start] + text.encode("utf-8") + data[end:]
        out = data.decode("utf-8")
        assert out.count("\n") == self.source.count("\n"), "rewrite changed the number of lines"
        return out


def _chain(node):
    """The dotted name of an Attribute/Name chain, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class PatchError(Exception):
    pass


def apply_patches(source, patches):
    """Exact text replacements: each (old, new[, count]) must match `count`
    (default 1) times and keep the number of lines."""
    for patch in patches:
        old, new = patch[0], patch[1]
        count = patch[2] if len(patch) > 2 and isinstance(patch[2], int) else 1
        found = source.count(old)
        if found != count:
            raise PatchError("patch %r matches %d times, expected %d" % (old, found, count))
        if old.count("\n") != new.count("\n"):
            raise PatchError("patch %r changes the number of lines" % (old,))
        source = source.replace(old, new)
    return source


def rewrite_source(source, filename="<autograd program>"):
    """autograd program text -> srcgrad program text (see the module docstring).
    Returns (new_source, notes) where notes lists what was rewritten."""
    tree = ast.parse(source, filename)
    edits = _Edits(source)
    notes = []
    direct_names = set()        # local names bound to sg.grad & co (argnum -> wrt)
    bare_autograd = False       # `import autograd...` without alias binds the name `autograd`

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if not any(a.name == "autograd" or a.name.startswith("autograd.") for a in node.names):
                continue
            parts = []
            for a in node.names:
                if not (a.name == "autograd" or a.name.startswith("autograd.")):
                    parts.append("import %s" % a.name if a.asname is None else "import %s as %s" % (a.name, a.asname))
                elif a.asname is not None:
                    parts.append(_import_text(map_dotted(a.name), a.asname))
                else:
                    bare_autograd = True
                    target = map_dotted(a.name)
                    module = target if not target.startswith(SHIM + ".") else SHIM
                    if module != SHIM:
                        parts.append("import %s" % module.rpartition(".")[0] if module.startswith("scipy.stats.")
                                     else "import %s" % module)
                    parts.append("import %s" % SHIM)
            edits.replace(node, "; ".join(parts))
            notes.append("line %d: %s" % (node.lineno, "; ".join(parts)))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "autograd" or node.module.startswith("autograd.")):
            parts = []
            grouped = {}        # parent module -> ["name", "name as alias"] (one `from` per module)
            for a in node.names:
                alias = a.asname or a.name
                if a.name == "*":
                    parts.append("from %s import *" % map_dotted(node.module))
                    continue
                full = node.module + "." + a.name
                target = map_dotted(full)
                if node.module in SHIM_MODULES and full not in SPECIAL and not full.startswith(
                        ("autograd.numpy", "autograd.scipy")):
                    target = SHIM + "." + a.name    # (autograd.misc.flatten is a module and a function)
                parent, _, last = target.rpartition(".")
                if parent:
                    grouped.setdefault(parent, []).append(last if last == alias else "%s as %s" % (last, alias))
                else:
                    parts.append(_import_text(target, alias))
                if target.startswith(SHIM + ".") and last in SRCGRAD_DIRECT:
                    direct_names.add(alias)
            parts += ["from %s import %s" % (parent, ", ".join(names)) for parent, names in grouped.items()]
            edits.replace(node, "; ".join(parts))
            notes.append("line %d: %s" % (node.lineno, "; ".join(parts)))

    if bare_autograd:
        # chains on the name `autograd`: autograd.scipy.signal.convolve -> benchmarks.compat.shim.convolve
        class Chains(ast.NodeVisitor):
            def visit_Attribute(self, node):
                path = _chain(node)
                if path is not None and path.split(".")[0] == "autograd":
                    edits.replace(node, map_dotted(path))
                    notes.append("line %d: %s -> %s" % (node.lineno, path, map_dotted(path)))
                    return
                self.generic_visit(node)
        Chains().visit(tree)

    # argnum= -> wrt= where the callee is srcgrad's grad/value_and_grad (imported as such)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _chain(node.func)
        direct = name in direct_names or (
            bare_autograd and name is not None and name.startswith("autograd.")
            and name.rpartition(".")[2] in SRCGRAD_DIRECT)
        if not direct:
            continue
        for kw in node.keywords:
            if kw.arg == "argnum":
                start = edits.offset(kw.lineno, kw.col_offset)
                edits.replace_span(start, start + len("argnum"), "wrt")
                notes.append("line %d: argnum= -> wrt=" % kw.lineno)
    return edits.apply(), notes
