"""One section per compiler pass (srcgrad/transforms/): each test pins a
guarantee the pass's module docstring states, on a small input, so that a
change to a pass shows which promise broke. Structural properties are read
off the pass's output AST (or the generated source); values are checked
against central differences (tests/gradcheck.py).

The functions transformed live in tests/passes_funcs.py (their lines are
found by `# <-marker` comments). The passes run as srcgrad.function runs
them: parse -> check -> lower at decoration (`Function`), resolve per
argument kinds (`Program`), anf -> kinds (`Program.front`), activity ->
reverse | forward -> codegen (`Compiled`), then inplace and optimize on the
assembled function (`Compiled._in_place`).
"""
import ast
import linecache
import math

import gast
import numpy as np
import pytest

import passes_funcs as pf
import srcgrad as sg
from gradcheck import check_close, numerical_grad
from srcgrad.errors import SourceNotFoundError, UnsupportedSyntaxError, fail
from srcgrad.callables import as_function
from srcgrad.function import Function, GeneratedFunction
from srcgrad.functional import _grad_inputs
from srcgrad.rules import registry
from srcgrad.rules.python import containers
from srcgrad.runtime import syntax as runtime_syntax
from srcgrad.syntax import ast_util
from srcgrad.syntax.anno import Anno
from srcgrad.syntax.naming import Namer
from srcgrad.syntax.templates import replace, replace_expr
from srcgrad.transforms import activity, batch_safety, inplace, instantiate, liveness, optimize, parse
from srcgrad.transforms.base import Transformer
from srcgrad.transforms.namespace import Namespace

# these tests pin what the compiler does and its refusals: no op-by-op fallback (conftest.py)
pytestmark = pytest.mark.usefixtures("compiled_only")

FILE = pf.__file__


# ------------------------------------------------------------------ helpers

def nodes(tree, *classes):
    return [n for n in ast_util.walk(tree) if isinstance(n, classes)]


def lowered(f):
    """parse -> check -> lower, on a fresh Function (not the cached one)."""
    return Function(f).parsed.node


def program(f, params=None):
    return as_function(f).program_for(params)


def front(f, mask=None, params=None):
    """anf -> kinds on a copy of the resolution: (fdef, ctx)."""
    p = program(f, params)
    return p.front("reverse", mask if mask is not None else (True,) + (False,) * (len(p.inputs) - 1))


def compiled(f, mask=None, params=None):
    p = program(f, params)
    return p.compile(mask if mask is not None else [True] + [False] * (len(p.inputs) - 1))


def calls_to(tree, obj):
    return [n for n in nodes(tree, gast.Call) if Anno.CALLEE.of(n.func) is obj]


def line_text(lineno):
    return linecache.getline(FILE, lineno)


def rng_array(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# ================================================================== parse

def test_parse_decorated_function_has_no_decorators_and_origins_on_the_real_lines():
    parsed = parse.parse(pf.decorated.python_function)
    node = parsed.node
    assert node.decorator_list == []
    assert parsed.filename == FILE
    assert Anno.ORIGIN.of(node)[:2] == (FILE, pf.line_of("decorated-def"))
    sin = [c for c in nodes(node, gast.Call) if ast_util.to_source(c).startswith("np.sin")][0]
    assert Anno.ORIGIN.of(sin)[:2] == (FILE, pf.line_of("decorated-sin"))
    for n in ast_util.walk(node):
        if hasattr(n, "lineno"):
            assert Anno.ORIGIN.of(n) is not None, type(n).__name__
            assert Anno.ORIGIN.of(n)[0] == FILE


def test_parse_origin_columns_point_at_the_source_text_of_an_indented_method():
    parsed = parse.parse(pf.Holder.method)
    assert parsed.firstlineno == pf.line_of("method-def")
    names = nodes(parsed.node, gast.Name)
    assert names
    for n in names:
        filename, lineno, col = Anno.ORIGIN.of(n)
        assert line_text(lineno)[col:].startswith(n.id), (n.id, lineno, col)


@pytest.mark.parametrize("fn, marker, body", [
    (pf.square, "square", "a * a"),
    (pf.pair[0], "pair", "a + 1.0"),
    (pf.pair[1], "pair", "a * 3.0"),
])
def test_parse_lambda_is_located_on_its_line_and_told_apart_from_its_neighbours(fn, marker, body):
    parsed = parse.parse(fn)
    node = parsed.node
    assert isinstance(node, gast.FunctionDef) and len(node.body) == 1 and isinstance(node.body[0], gast.Return)
    assert ast_util.to_source(node.body[0].value).strip() == body
    assert node.name == ("square" if fn is pf.square else "lambda_")
    lineno = pf.line_of(marker)
    value = node.body[0].value
    assert Anno.ORIGIN.of(value)[:2] == (FILE, lineno)
    assert line_text(lineno)[Anno.ORIGIN.of(value)[2]:].startswith(body)


@pytest.mark.parametrize("fn, marker, body, name", [
    (pf.TABLE["double"], "table-double", "a * 2.0", "lambda_"),
    (pf.TABLE["shift"], "table-shift", "a - 1.0", "lambda_"),
    (pf.kept, "keyword-lambda", "a + 5.0", "fn"),
])
def test_parse_lambda_inside_a_display_or_a_call_spanning_lines(fn, marker, body, name):
    node = parse.parse(fn).node
    assert node.name == name
    value = node.body[0].value
    assert ast_util.to_source(value).strip() == body
    assert Anno.ORIGIN.of(value)[:2] == (FILE, pf.line_of(marker))


def test_parse_reads_a_functools_wraps_wrapper_as_itself():
    parsed = parse.parse(pf.wrapped)
    assert parsed.node.name == "wrapper"
    assert Anno.ORIGIN.of(parsed.node)[:2] == (FILE, pf.line_of("wrapper"))
    x = np.array([1.0, -2.0])
    check_close(sg.grad(pf.wrapped)(x), 4.0 * x, rtol=1e-12)


def test_parse_without_source_raises_source_not_found():
    namespace = {}
    exec("def made(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(SourceNotFoundError):
        parse.parse(namespace["made"])
    with pytest.raises(SourceNotFoundError):
        parse.parse(len)


# ================================================================== check

@pytest.mark.parametrize("name, marker, construct", [
    ("bad_try", "try", "try statement"),
    ("bad_yield", "yield", "yield"),
    ("bad_global", "global", "global statement"),
    ("bad_import", "import", "import statement"),
    ("bad_class", "class", "class definition"),
    ("bad_attribute", "attribute", "attribute assignment"),
    ("bad_setcomp", "setcomp", "set comprehension"),
    ("bad_walrus", "walrus", ":="),
    ("bad_del_item", "delitem", "del of an element"),
    ("bad_for_else", "forelse", "for-else"),
    ("bad_with_return", "withreturn", "return inside a with block"),
    ("bad_eval", "eval", "eval()"),
])
def test_check_rejects_unsupported_syntax_naming_file_and_line(name, marker, construct):
    del pf.CALLS[:]
    with pytest.raises(UnsupportedSyntaxError) as info:
        sg.function(getattr(pf, name))
    err = info.value
    assert construct in err.construct
    assert err.filename == FILE
    assert err.lineno == pf.line_of(marker)
    assert "passes_funcs.py:%d" % err.lineno in str(err)
    assert pf.CALLS == []           # raised at decoration: no user code ran


def test_check_lets_the_supported_subset_through():
    for f in (pf.jumps, pf.early_return, pf.sequences, pf.elements, pf.local_functions, pf.with_block,
              pf.nested_jumps, pf.supported_misc):
        sg.function(f)          # no error
    # starred unpacking, assert, raise, del of a name
    x = np.array([0.5, -1.0, 2.0])
    check_close(sg.grad(pf.supported_misc)(x), numerical_grad(pf.supported_misc, x))


# ================================================================== lower

@pytest.mark.parametrize("f", [pf.jumps, pf.early_return, pf.find_first, pf.nested_jumps])
def test_lower_break_continue_and_early_return_become_flags(f):
    node = lowered(f)
    assert not nodes(node, gast.Break, gast.Continue)
    returns = nodes(node, gast.Return)
    assert len(returns) == 1 and node.body[-1] is returns[0]
    # loops that can be left early are while loops testing the flags; the rest are range loops
    for loop in nodes(node, gast.For):
        assert isinstance(loop.iter, gast.Call) and loop.iter.func.id == "range"
    if f is not pf.early_return:
        loops = nodes(node, gast.While)
        assert loops and all(ast_util.names_loaded(w.test) & {"_break", "_return"} for w in loops
                             if w.test is not None and "_k" in ast_util.names_loaded(w.test))


@pytest.mark.parametrize("f, args", [
    (pf.jumps, (np.array([0.3, -1.2]), 6)),
    (pf.early_return, (np.array([0.3, -1.2]),)),
    (pf.early_return, (np.array([-0.3, -1.2]),)),
    (pf.find_first, (np.array([-0.5, -0.3, 0.7, -0.2, 0.1]),)),
    (pf.nested_jumps, (np.array([-0.5, 0.3, 0.7]),)),
])
def test_lower_flags_keep_the_values(f, args):
    x, rest = args[0], args[1:]

    def scalar(v):
        return np.sum(f(v, *rest))
    check_close(sg.grad(f)(*args), numerical_grad(scalar, x))


def test_lower_loops_over_sequences_become_index_loops():
    node = lowered(pf.sequences)
    loops = nodes(node, gast.For)
    assert len(loops) == 3
    for loop in loops:
        assert isinstance(loop.target, gast.Name)
        assert isinstance(loop.iter, gast.Call) and loop.iter.func.id == "range"
        assert Anno.OVER.of(loop)      # marked for resolve.py's unrolling
        reads = [s for s in loop.body if isinstance(s, gast.Assign) and isinstance(s.value, gast.Subscript)]
        assert reads and all(ast_util.to_source(s.value.slice).strip() == loop.target.id for s in reads)
    xs, ys = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    check_close(sg.grad(pf.sequences)(xs, ys), numerical_grad(lambda v: pf.sequences(v, ys), xs))


def test_lower_element_assignment_and_append_become_functional_calls():
    node = lowered(pf.elements)
    stores = [n for n in nodes(node, gast.Subscript) if isinstance(n.ctx, gast.Store)]
    assert stores == []
    assert not nodes(node, gast.AugAssign)
    assert len(calls_to(node, containers.setitem)) == 2
    assert len(calls_to(node, containers.list_append)) == 2
    assert not [c for c in nodes(node, gast.Call) if isinstance(c.func, gast.Attribute) and c.func.attr == "append"]
    x = np.array([0.5, -1.0, 2.0])
    kept = x.copy()
    check_close(sg.grad(pf.elements)(x), numerical_grad(pf.elements, x))
    np.testing.assert_array_equal(x, kept)      # the caller's array is never mutated


def test_lower_inlines_local_functions_and_comprehensions():
    node = lowered(pf.local_functions)
    assert [n for n in nodes(node, gast.FunctionDef) if n is not node] == []
    assert not nodes(node, gast.Lambda, gast.ListComp, gast.GeneratorExp)
    assert calls_to(node, containers.list_append)       # the comprehension is a loop of appends
    x = np.array([0.5, -1.0, 2.0])
    check_close(sg.grad(pf.local_functions)(x), numerical_grad(pf.local_functions, x))


def test_lower_with_block_is_its_body_between_enter_and_exit():
    node = lowered(pf.with_block)
    assert not nodes(node, gast.With)
    enters = [k for k, s in enumerate(node.body) if calls_to(s, runtime_syntax.with_enter)]
    exits = [k for k, s in enumerate(node.body) if calls_to(s, runtime_syntax.with_exit)]
    assert len(enters) == len(exits) == 1 and enters[0] < exits[0]
    body = node.body[enters[0] + 1:exits[0]]
    assert [ast_util.to_source(s).strip() for s in body] == ["y = np.log(x)"]
    x = np.array([0.5, 2.0])
    check_close(sg.grad(pf.with_block)(x), 1.0 / x)


def test_lower_dict_items_loop_reads_by_key():
    node = lowered(pf.items_loop)
    assert [type(n).__name__ for n in nodes(node, gast.For)] == ["For"]
    d = {"a": np.array(1.0), "b": np.array([2.0, 3.0])}
    g = sg.grad(pf.items_loop)(d)          # (the gradient of the sum of the output, an array)
    assert set(g) == {"a", "b"}
    check_close(g["a"], 6.0)
    check_close(g["b"], [3.0, 3.0])


def test_lower_loop_over_a_dict_is_refused_at_its_line():
    """`for k in d` is lowered to an index loop (`k = seq[i]`), which a dict
    cannot follow: a run-time check raises at the user's loop."""
    d = {"a": np.array(1.0), "b": np.array(2.0)}
    with pytest.raises(UnsupportedSyntaxError) as info:
        sg.grad(pf.dict_loop)(d)
    assert info.value.filename == FILE and info.value.lineno == pf.dict_loop.__code__.co_firstlineno + 2
    assert "dict" in info.value.construct and "d.items()" in info.value.hint


def test_lower_rejects_an_element_assignment_to_a_view_still_shared():
    with pytest.raises(UnsupportedSyntaxError) as info:
        sg.function(pf.view_write)
    assert info.value.filename == FILE and info.value.lineno == pf.line_of("view")
    assert "view" in info.value.construct


def _nested_comprehension_over_a_range(x):
    m = [[x[a] * b for b in range(2)] for a in range(3)]
    return np.sum(np.array(m))


def test_lower_nested_comprehension_keeps_its_loop_target_a_store():
    """The element of a comprehension is placed by templates.replace, which
    fixes the context of the placeholder only: a comprehension inside it
    keeps its target (which became a load, then an unresolved name)."""
    node = lowered(_nested_comprehension_over_a_range)
    assert not nodes(node, gast.ListComp)
    for loop in nodes(node, gast.For):
        assert isinstance(loop.target.ctx, gast.Store)
    x = np.array([0.5, -1.0, 2.0])
    check_close(sg.grad(_nested_comprehension_over_a_range)(x), np.ones(3))


def test_lower_generated_code_points_at_the_users_lines():
    """Lowered statements inherit the origin of the statement they replace
    (transforms/base.py); the tests and ranges of the control flow the
    lowering adds point nowhere."""
    node = lowered(pf.sequences)
    for s in ast_util.walk(node):
        if isinstance(s, gast.stmt) and s is not node:
            assert Anno.ORIGIN.of(s)[0] == FILE, ast_util.to_source(s)
    for loop in nodes(node, gast.For):
        assert not Anno.ORIGIN.exists(loop.iter) and not Anno.ORIGIN.exists(loop.target)
    node = lowered(pf.find_first)
    guards = [n for n in nodes(node, gast.If, gast.While) if Anno.CONDITION.of(n.test)]
    assert guards and all(Anno.ORIGIN.exists(g) and not Anno.ORIGIN.exists(g.test) for g in guards)


def test_base_transformer_replacements_inherit_the_origin_down_to_moved_code():
    tree = ast_util.quote("if c:\n    y = f(x)")
    outer, inner = tree[0], tree[0].body[0]
    Anno.ORIGIN.add_to(outer, ("a.py", 1, 0))
    Anno.ORIGIN.add_to(outer.test, ("a.py", 1, 3))
    Anno.ORIGIN.add_to(inner, ("a.py", 2, 4))

    class Guard(Transformer):
        def visit_If(self, node):
            flag = ast_util.name("flag")
            loop = ast_util.while_(replace_expr("not FLAG", FLAG=flag), node.body)
            return replace("FLAG = C", FLAG=flag, C=node.test) + [loop]

    new = Guard().visit_block(tree)
    assert [Anno.ORIGIN.of(n) for n in (new[0], new[0].targets[0], new[1])] == [("a.py", 1, 0)] * 3
    assert Anno.ORIGIN.of(new[0].value) == ("a.py", 1, 3)          # a copy of the test: its own origin
    assert not Anno.ORIGIN.exists(new[1].test)                      # a test of ours: none
    assert new[1].body[0] is inner and Anno.ORIGIN.of(inner) == ("a.py", 2, 4)
    assert not Anno.ORIGIN.exists(inner.value)                      # moved code: left as it was


def test_templates_replace_fixes_the_context_where_the_placeholder_stands():
    target = ast_util.quote_expr("(a, b[i])")
    comp = ast_util.quote_expr("[t for t in ts]")
    assign, = replace("T = V", T=target, V=comp)
    assert isinstance(assign.targets[0].ctx, gast.Store)
    assert [type(e.ctx) for e in assign.targets[0].elts] == [gast.Store, gast.Store]
    assert isinstance(assign.targets[0].elts[1].value.ctx, gast.Load)       # b is read
    assert isinstance(assign.value.generators[0].target.ctx, gast.Store)    # the comprehension's own
    assert assign.targets[0] is not target and isinstance(target.ctx, gast.Load)   # copies, not the nodes
    assert ast_util.to_source(replace_expr("not F", F=ast_util.quote_expr("a or b"))).strip() == "not (a or b)"


def test_ast_util_targets_and_as_load():
    assert ast_util.targets(ast_util.quote("a = f(x)")[0]) == ["a"]
    assert ast_util.targets(ast_util.quote("a, b = f(x)")[0]) == ["a", "b"]
    e = ast_util.as_load(ast_util.quote("a[i] = 1")[0].targets[0])
    assert isinstance(e.ctx, gast.Load)
    assert ast_util.as_load(None) is None


def test_fail_names_the_users_file_line_and_source():
    parsed = parse.parse(pf.view_write)
    stmt = next(s for s in ast_util.walk(parsed.node) if isinstance(s, gast.stmt)
                and Anno.ORIGIN.of(s)[1] == pf.line_of("view"))
    with pytest.raises(UnsupportedSyntaxError) as info:
        fail(parsed, stmt, "this construct", "a hint")
    assert (info.value.filename, info.value.lineno) == (FILE, pf.line_of("view"))
    assert info.value.text == line_text(pf.line_of("view"))
    assert str(info.value).startswith("this construct is not supported by srcgrad (a hint)\n  at ")


def test_namespace_static_lookup_without_running_code():
    ns = Namespace(pf.view_write)
    assert ns.static(ast_util.quote_expr("np.linalg.norm")) is np.linalg.norm
    assert ns.static(ast_util.quote_expr("np")) is np
    assert ns.static(ast_util.quote_expr("np"), local_names={"np"}) is None
    assert ns.static(ast_util.quote_expr("np.ones(3).T")) is None            # (would run code)
    assert ns.static(ast_util.quote_expr("len")) is len


def test_naming_is_deterministic():
    namer = Namer({"x", "x_1"})
    assert [namer.fresh("x"), namer.fresh("x"), namer.fresh("y"), namer.fresh("lambda"), namer.fresh("2d")] == \
        ["x_2", "x_3", "y", "lambda_", "_2d"]
    first = Function(pf.tanh_loop).program_for(None).compile([True]).source
    second = Function(pf.tanh_loop).program_for(None).compile([True]).source
    assert first == second


# ================================================================== resolve

@pytest.mark.parametrize("f", [pf.reads_globals, pf.reads_chain, pf.unrolled, pf.nested, pf.activity_mix,
                               pf.jumps, pf.sequences, pf.elements])
def test_resolve_every_call_knows_what_it_calls(f):
    res = program(f).resolution
    calls = nodes(res.node, gast.Call)
    assert calls
    for call in calls:
        func = call.func
        assert Anno.CALLEE.exists(func) or Anno.METHOD.exists(func), ast_util.to_source(call)
    methods = [Anno.METHOD.of(c.func) for c in calls if Anno.METHOD.exists(c.func)]
    if f is pf.reads_globals:
        assert methods == ["sum"]           # x.sum(): an ndarray method on a local value


def test_resolve_a_global_variable_is_a_leaf_and_an_input():
    p = program(pf.reads_globals)
    res = p.resolution
    assert [leaf.root for leaf in res.leaves] == ["W"]
    leaf = res.leaves[0]
    assert p.inputs == ["x", leaf.name]
    assert leaf.fetch({"x": None}, p.namespace) is pf.W
    # free: every global read, with the object it held
    assert res.free["W"] is pf.W and res.free["helper"] is pf.helper and res.free["SCALE"] == pf.SCALE
    x = np.array([0.5, -1.0])
    with sg.GradientTape() as tape:
        y = sg.function(pf.reads_globals)(sg.constant(x))
    W0 = pf.W.numpy()
    check_close(tape.gradient(y, pf.W),
                numerical_grad(lambda w: np.sum(w @ x) * 2.0 * pf.SCALE + np.sum(x), W0))


def test_resolve_an_item_chain_is_replaced_by_a_fresh_local():
    p = program(pf.reads_chain)
    res = p.resolution
    assert len(res.leaves) == 1
    leaf = res.leaves[0]
    assert leaf.name != "PARAMS" and leaf.text == "PARAMS['W']"
    assert "PARAMS" not in ast_util.names_loaded(res.node)
    assert leaf.name in ast_util.names_loaded(res.node)
    assert leaf.fetch({"x": None}, p.namespace) is pf.PARAMS["W"]


def test_resolve_rebinding_a_global_makes_the_program_stale(monkeypatch):
    p = program(pf.reads_globals)
    assert p.is_current()
    monkeypatch.setattr(pf, "SCALE", 5.0)
    assert not p.is_current()
    monkeypatch.undo()
    assert p.is_current()


def test_resolve_unrolls_a_loop_over_a_known_list_of_functions():
    res = program(pf.unrolled).resolution
    assert not nodes(res.node, gast.For)
    callees = [Anno.CALLEE.of(c.func) for c in nodes(res.node, gast.Call)]
    for step in pf.STEPS:
        assert step in callees
    x = np.array([0.5, -1.0])
    check_close(sg.grad(pf.unrolled)(x), numerical_grad(pf.unrolled, x))


# ================================================================== anf

def _simple(e):
    if isinstance(e, (gast.Name, gast.Constant)):
        return True
    if isinstance(e, (gast.Tuple, gast.List)):
        return all(_simple(x) for x in e.elts)
    return False


def _simple_index(e):
    if isinstance(e, gast.Slice):
        return all(v is None or _simple(v) for v in (e.lower, e.upper, e.step))
    if isinstance(e, gast.Tuple):
        return all(_simple_index(x) for x in e.elts)
    return _simple(e)


def _callee_ok(func):
    """A called function: a name, a module attribute chain, or a method of a name."""
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name)


def _one_op(e):
    """Is `e` one operation on names and constants?"""
    if _simple(e):
        return True
    if isinstance(e, gast.BinOp):
        return _simple(e.left) and _simple(e.right)
    if isinstance(e, gast.UnaryOp):
        return _simple(e.operand)
    if isinstance(e, gast.Compare):
        return _simple(e.left) and all(_simple(c) for c in e.comparators)
    if isinstance(e, gast.Subscript):
        return _simple(e.value) and _simple_index(e.slice)
    if isinstance(e, gast.Attribute):
        return _simple(e.value)
    if isinstance(e, gast.Dict):
        return all(_simple(k) for k in e.keys) and all(_simple(v) for v in e.values)
    if isinstance(e, gast.Call):
        return (_callee_ok(e.func) and all(_simple(a.value if isinstance(a, gast.Starred) else a) for a in e.args)
                and all(_simple(k.value) for k in e.keywords))
    return False


ANF_CASES = [pf.nested, pf.boolean, pf.activity_mix, pf.jumps, pf.early_return, pf.elements, pf.sequences,
             pf.local_functions, pf.nested_jumps, pf.calls_helper]


@pytest.mark.parametrize("f", ANF_CASES)
def test_anf_one_operation_per_assignment(f):
    fdef, _ = front(f)
    checked = 0
    for s in nodes(fdef, gast.Assign):
        assert Anno.OP.exists(s), ast_util.to_source(s)
        if Anno.OP.of(s).kind == "nondiff" and Anno.OP.of(s).source == "cond":
            # conditions are evaluated as written (short-circuit and all: anf._ANF.condition),
            # never differentiated; the module docstring does not mention this exception
            continue
        assert _one_op(s.value), ast_util.to_source(s)
        checked += 1
    assert checked


@pytest.mark.parametrize("f", ANF_CASES)
def test_anf_tests_are_names_loops_are_ranges_and_the_return_is_names(f):
    fdef, _ = front(f)
    for s in nodes(fdef, gast.If, gast.While):
        assert isinstance(s.test, gast.Name), ast_util.to_source(s.test)
    for s in nodes(fdef, gast.For):
        assert isinstance(s.iter, gast.Call) and s.iter.func.id == "range"
        assert all(_simple(a) for a in s.iter.args)
    ret = fdef.body[-1]
    assert isinstance(ret, gast.Return) and len(nodes(fdef, gast.Return)) == 1
    elts = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
    assert all(isinstance(e, gast.Name) for e in elts)


def test_anf_returns_distinct_names():
    fdef, _ = front(pf.same_twice)
    ret = fdef.body[-1].value
    ids = [e.id for e in ret.elts]
    assert len(ids) == 2 and len(set(ids)) == 2


@pytest.mark.parametrize("f", ANF_CASES)
def test_anf_ssa_at_the_top_level_and_no_self_reference_in_loops(f):
    fdef, ctx = front(f)
    assigned = {}
    for s in fdef.body:
        if isinstance(s, gast.Assign):
            for n in ast_util.names_stored(s.targets[0]):
                assigned[n] = assigned.get(n, 0) + 1
    stacked = ctx.facts.stacked
    inputs = set(ctx.facts.inputs)
    for n, count in assigned.items():
        if n not in stacked:
            assert count == 1, n
            assert n not in inputs, n        # a parameter reassigned gets a new version
    for s in nodes(fdef, gast.Assign):
        if Anno.NO_SAVE.of(s, False):
            continue        # the while loop's trip counter: read by nothing in the reverse sweep
        mine = ast_util.names_stored(s.targets[0]) & stacked
        assert not (mine & ast_util.names_loaded(s.value)), ast_util.to_source(s)


def test_anf_reassignments_get_versions():
    fdef, _ = front(pf.nested)
    top = [s.targets[0].id for s in fdef.body if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]
    assert {"z", "z_1", "z_2"} <= set(top)


def test_anf_drops_docstrings_and_pass():
    fdef, _ = front(pf.early_return)
    assert not nodes(fdef, gast.Pass)
    assert not [s for s in ast_util.walk(fdef) if isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant)]


def test_anf_keeps_the_value():
    x, y = np.array([0.4, -0.3]), np.array([1.5, 0.7])
    check_close(sg.grad(pf.nested)(x, y), numerical_grad(lambda v: pf.nested(v, y), x))
    check_close(sg.grad(pf.nested, wrt=1)(x, y), numerical_grad(lambda v: pf.nested(x, v), y))
    for x in (np.array([0.4, 0.3]), np.array([-0.4, 0.3])):
        check_close(sg.grad(pf.boolean)(x), numerical_grad(pf.boolean, x))


# ================================================================== kinds

def test_kinds_containers_are_dynamic_arrays_are_not():
    fdef, ctx = front(pf.containers_fn, (True, True), params={"xs": [np.ones(2), np.ones(2)], "y": np.ones(2)})
    dynamic = ctx.facts.dynamic
    assert "xs" in dynamic and "t" in dynamic
    assert "a" not in dynamic and "y" not in dynamic
    fdef, ctx = front(pf.elements)
    assert {"ys", "ys_1"} <= ctx.facts.dynamic
    assert not {"y", "y_1", "y_2", "x"} & ctx.facts.dynamic


def test_kinds_scalars():
    fdef, ctx = front(pf.activity_mix, (True, False))
    assert {"k", "sum_1"} <= ctx.facts.scalar
    assert not {"x", "z", "w", "c"} & ctx.facts.scalar
    fdef, ctx = front(pf.scalar_loop, (True, False), params={"x": 1.0, "n": 3})
    assert {"x", "s", "y"} <= ctx.facts.scalar


# ================================================================== activity

def _active(f, mask):
    p = program(f)
    fdef, ctx = p.front("reverse", mask)
    active_inputs = [n for n, m in zip(p.inputs, mask) if m]
    ret = fdef.body[-1].value
    outputs = [e.id for e in ret.elts] if isinstance(ret, gast.Tuple) else [ret.id]
    return activity.analyze(fdef, ctx, active_inputs, outputs)


def test_activity_integers_shapes_and_unused_values_are_inactive():
    active = _active(pf.activity_mix, (True, False))
    assert {"x", "z", "mul_z", "sum_1", "out"} <= active
    # a shape, an integer counter, an index: never active
    assert not {"x_shape", "n", "k", "add_k", "i", "argmax_x", "j"} & active
    # varied (depends on x) but not useful (no output depends on it)
    assert not {"w", "unused"} & active
    # useful but not varied (y is not differentiated)
    assert "c" not in active and "y" not in active


def test_activity_follows_the_mask():
    active = _active(pf.activity_mix, (True, True))
    assert {"c", "y"} <= active
    assert not {"w", "unused", "k", "n"} & active
    assert not ({"z", "w", "x"} & _active(pf.activity_mix, (False, True)))


def test_activity_inactive_names_get_no_adjoint_code():
    src = sg.source(pf.activity_mix)
    for name in ("bw", "bunused", "bk", "bn", "bc", "bj"):
        assert name + " =" not in src
    x, y = np.array([0.3, -0.2, 0.9]), np.array([1.0, 2.0, -1.0])
    check_close(sg.grad(pf.activity_mix)(x, y), numerical_grad(lambda v: pf.activity_mix(v, y), x))


# ================================================================== reverse

def _pushed_and_popped(tree):
    pushes, pops = [], []
    for c in nodes(tree, gast.Call):
        if isinstance(c.func, gast.Name) and c.func.id == "push":
            pushes.append(ast_util.to_source(c.args[1]).strip())
        elif isinstance(c.func, gast.Name) and c.func.id == "pop":
            pops.append(c)
    return pushes, pops


def test_reverse_pushes_only_what_the_adjoint_reads():
    c = compiled(pf.tanh_loop)
    assert c.sweeps.pushed == {"h"}
    pushes, pops = _pushed_and_popped(c.trees[c._shown.name])
    assert pushes == ["h"] and len(pops) == 1       # not the constant c, not the temporary h * c
    x = np.array([0.1, -0.3, 0.5])
    check_close(sg.grad(pf.tanh_loop)(x), numerical_grad(pf.tanh_loop, x))


def test_reverse_python_float_code_has_no_zeros_like():
    """What sg.grad runs for a Python float argument (the scalar kinds):
    adjoints start at 0.0, and no np.zeros_like reset in or before the loop."""
    fn = as_function(pf.scalar_loop)
    p, mask, raw = _grad_inputs(fn, (1.0, 5), {}, (0,))
    src = p.compile(mask).source
    assert "zeros_like" not in src
    assert "by = 0.0" in src
    assert "unbroadcast" not in src
    pushes, _ = _pushed_and_popped(ast_util.parse(src))
    assert sorted(pushes) == ["cond", "y"]      # not s, mul_s, sin_y, mul: the adjoint never reads them
    g = sg.grad(pf.scalar_loop)(1.0, 5)
    h = 1e-6
    assert abs(g - (pf.scalar_loop(1.0 + h, 5) - pf.scalar_loop(1.0 - h, 5)) / (2 * h)) < 1e-6


def test_reverse_symbolic_zeros_first_contribution_is_an_assignment():
    c = compiled(pf.two_uses)
    assert "zeros_like" not in c.source
    rev = c.sweeps.rev_body
    firsts = {}
    for s in nodes(ast_util.module(rev), gast.Assign):
        t = s.targets[0]
        if isinstance(t, gast.Name) and t.id.startswith("b") and t.id not in firsts:
            firsts[t.id] = s
    assert "bx" in firsts
    for name, s in firsts.items():
        if name in c.sweeps.seeds.values():
            continue
        assert name not in ast_util.names_loaded(s.value), ast_util.to_source(s)      # never bx = bx + ...
    x = np.array([0.1, -0.3, 0.5])
    check_close(sg.grad(pf.two_uses)(x), numerical_grad(pf.two_uses, x))


def test_reverse_user_calls_are_reversed_in_split_mode():
    """A called user function runs once: the forward sweep calls its split
    forward, which returns the residuals its split adjoint reads."""
    c = compiled(pf.calls_helper)
    src = c.source
    assert ", helper_res = helper_fwd(sin_x)" in src
    assert "= helper_bwd(helper_res, " in src
    assert "= helper(" not in src and "helper_vjp" not in src
    assert "push(" not in src
    x = np.array([0.1, -0.3, 0.5])
    before = next(pf.HELPER_CALLS)
    g = sg.grad(pf.calls_helper)(x)
    assert next(pf.HELPER_CALLS) == before + 2       # one call of helper, then this next()
    check_close(g, numerical_grad(pf.calls_helper, x))


# ================================================================== forward

def _directional(f, x, v, eps=1e-6):
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


def test_forward_no_stack_and_zeros_for_a_value_that_becomes_active():
    src = sg.source(pf.becomes_active, mode="forward")
    assert "push(" not in src and "pop(" not in src
    assert "ds = np.zeros_like(s)" in src
    assert "for i in range(3):" in src          # control flow kept as is
    x, v = np.array([0.5, -1.0]), np.array([0.3, 0.8])
    out, tangent = sg.jvp(pf.becomes_active, (x,), (v,))
    check_close(out, pf.becomes_active(x), rtol=1e-12)
    check_close(tangent, _directional(pf.becomes_active, x, v))


def test_forward_tuple_output_returns_outputs_then_tangents():
    p = program(pf.two_outputs)
    c = p.compile([True], "forward")
    ret = c.trees[c._shown.name].body[-1].value
    assert isinstance(ret, gast.Tuple) and len(ret.elts) == 2
    assert all(isinstance(e, gast.Tuple) and len(e.elts) == 2 for e in ret.elts)
    x, v = np.array([0.5, -1.0]), np.array([0.3, 0.8])
    (a, b), (da, db) = sg.jvp(pf.two_outputs, (x,), (v,))
    check_close(da, _directional(lambda u: pf.two_outputs(u)[0], x, v))
    check_close(db, _directional(lambda u: pf.two_outputs(u)[1], x, v))


def test_forward_an_output_without_tangent_is_none():
    c = program(pf.one_tangent).compile([True, False], "forward")
    x, y, dx = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([0.5, -0.5])
    (a, b), (da, db) = c.jvp(x, y, dx)
    check_close(a, 2.0 * x)
    check_close(b, 3.0 * y)
    check_close(da, 2.0 * dx)
    assert db is None


def test_forward_keeps_loops_with_exits():
    x, v = np.array([-0.5, 0.3, 0.7]), np.array([1.0, -2.0, 0.5])
    _, tangent = sg.jvp(pf.nested_jumps, (x,), (v,))
    check_close(tangent, _directional(pf.nested_jumps, x, v))


# ================================================================== inline

def _inline_multiply(targets, materialized):
    rule = registry.adjoint_rule(np.multiply)
    before = ast.dump(ast_util.to_ast(rule.tree))
    namer = Namer({"z", "bz", "a", "b", "ba", "bb"})
    bindings = {"x": ast_util.name("a"), "y": ast_util.name("b")}
    code = instantiate.inline_adjoint(rule.tree, "z", "bz", bindings, targets, materialized, namer)
    assert ast.dump(ast_util.to_ast(rule.tree)) == before       # the template is never changed
    return [ast_util.to_source(s).strip() for s in code]


def test_inline_first_contribution_assigns_later_ones_accumulate():
    held = set()
    lines = _inline_multiply({"x": "ba", "y": "bb"}, held)
    assert lines == ["ba = unbroadcast(bz * conj(b), a)", "bb = unbroadcast(bz * conj(a), b)"]
    assert held == {"ba", "bb"}
    lines = _inline_multiply({"x": "ba", "y": None}, {"ba"})
    assert lines == ["ba = ba + unbroadcast(bz * conj(b), a)"]      # the dropped operand leaves nothing


def test_inline_drops_a_constant_operands_contribution_in_generated_code():
    src = sg.source(pf.tanh_loop)
    assert "bc" not in src          # h * c with c = 2.0: no cotangent for c


# ================================================================== optimize

def _src(stmts):
    return "\n".join(ast_util.to_source(s).strip() for s in stmts)


def test_optimize_fold_constants_but_never_x_times_zero():
    stmts = ast_util.quote("a = 2 - 1\nb = x ** 1\nc = x * 0\nd = 2.0 * 3.0 + y\ne = x * 1")
    assert _src(optimize.fold(stmts)).split("\n") == ["a = 1", "b = x", "c = x * 0", "d = 6.0 + y", "e = x * 1"]


def test_optimize_live_in():
    stmts = ast_util.quote("y = x + 1\nz = y * w")
    assert liveness.live_in(stmts, {"z"}) == {"x", "w"}
    loop = ast_util.quote("for i in range(n):\n    s = s + x\n    t = s")
    assert liveness.live_in(loop, {"s"}) == {"range", "n", "s", "x"}      # (t is dead)


def test_optimize_propagate_copies():
    stmts = ast_util.quote("a = b\nc = a * 2.0\nd = c + a")
    assert _src(optimize.propagate_copies(stmts, {"d"})) == "c = b * 2.0\nd = c + b"
    stmts = ast_util.quote("a = b\nb = 3.0\nc = a * b")         # b rewritten: a keeps the old value
    assert "a = b" in _src(optimize.propagate_copies(stmts, {"c"}))


def test_optimize_collapse_temporaries():
    stmts = ast_util.quote("t = f(a)\nx = t\ny = x + 1")
    assert _src(optimize.collapse_temporaries(stmts, {"y"})) == "x = f(a)\ny = x + 1"
    stmts = ast_util.quote("t = f(a)\nx = t\ny = x + t")        # t read after: kept
    assert _src(optimize.collapse_temporaries(stmts, {"y"})) == "t = f(a)\nx = t\ny = x + t"
    loop = ast_util.quote("for i in range(n):\n    s_new = g(s, i)\n    s = s_new")
    out = optimize.collapse_temporaries(loop, {"s"})
    assert _src(out[0].body) == "s = g(s, i)"
    stmts = ast_util.quote("t = f(a)\nx = t\ndel t\ny = x")    # a name a del frees stays assigned
    assert _src(optimize.collapse_temporaries(stmts, {"y"})).startswith("t = f(a)\nx = t")


def test_optimize_free_dead_frees_after_the_last_reader_in_the_reverse_sweep_only():
    body = (ast_util.quote("a = x * 2.0\nb = a + 1.0")
            + [ast_util.comment("Reverse sweep")]
            + ast_util.quote("c = b * 3.0\nunused = x * 5.0\nif p:\n    q = c\nelse:\n    q = x\nd = c + q\n"
                             "e = d * d\nreturn e"))
    out = optimize.free_dead(body, ["x", "p"])
    text = _src(out).split("\n")
    marker = next(k for k, line in enumerate(text) if "Reverse sweep" in line)
    assert not [line for line in text[:marker] if line.startswith("del")]        # forward: untouched
    assert text[text.index("c = b * 3.0") + 1] == "del b"
    assert text[text.index("unused = x * 5.0") + 1] == "del unused"                # assigned, never read
    assert text[text.index("d = c + q") + 1] == "del c"                            # (q: bound in branches only)
    deleted = {name.strip() for line in text if line.startswith("del ") for name in line[4:].split(",")}
    assert not deleted & {"x", "p", "a", "q"}


@pytest.mark.parametrize("f", [pf.tanh_loop, pf.activity_mix, pf.elements, pf.calls_helper, pf.nested_jumps])
def test_optimize_generated_dels_never_free_a_live_name_or_a_parameter(f):
    c = compiled(f)
    tree = c.trees[c._shown.name]
    params = {a.id for a in tree.args.args}
    body = tree.body
    assert [s for s in body if isinstance(s, gast.Delete)]
    for k, s in enumerate(body):
        if isinstance(s, gast.Delete):
            names = {t.id for t in s.targets}
            assert not names & params
            assert not names & liveness.live_in(body[k + 1:], set()), ast_util.to_source(s)


# ================================================================== inplace
# (end-to-end cases: tests/test_inplace.py; here the rewrite itself)

_LOOKUP = {"setitem": containers.setitem, "zero_at": containers.zero_at, "np": np}


def _in_place(src):
    fdef = ast_util.quote(src)[0]
    injected = {}

    def inject(name, obj):
        injected[name] = obj
        return name
    count = inplace.update_in_place(fdef, _LOOKUP.get, inject)
    return count, _src(fdef.body).split("\n"), injected


def test_inplace_writes_only_into_unshared_dead_buffers():
    count, lines, injected = _in_place(
        "def f(x, v):\n"
        "    a = np.zeros(3)\n"
        "    b = setitem(a, 0, v)\n"          # a fresh, dead after: in place
        "    c = b\n"
        "    d = setitem(b, 1, v)\n"          # c shares b and is read later: a copy
        "    e = setitem(x, 0, v)\n"          # the caller's array: never in place
        "    k = x[1:]\n"
        "    m = setitem(k, 0, v)\n"          # a view of the caller's array: never in place
        "    g = np.ones(2)\n"
        "    h = zero_at(g, 0)\n"             # the adjoint helper: in place too
        "    return d, c, e, m, h\n")
    assert lines[1] == "b = setitem_in_place(a, 0, v)"
    assert lines[3] == "d = setitem(b, 1, v)"
    assert lines[4] == "e = setitem(x, 0, v)"
    assert lines[6] == "m = setitem(k, 0, v)"
    assert lines[8] == "h = zero_at_in_place(g, 0)"
    assert count == 2
    assert injected == {"setitem_in_place": containers.setitem_in_place,
                        "zero_at_in_place": containers.zero_at_in_place}


def test_inplace_not_in_place_when_the_old_value_is_live_in_a_loop():
    count, lines, _ = _in_place(
        "def f(v, n):\n"
        "    a = np.zeros(3)\n"
        "    for i in range(n):\n"
        "        b = setitem(a, i, v)\n"       # a is read again on the next trip
        "    return b\n")
    assert count == 0


def test_inplace_never_writes_through_a_view_into_the_callers_array():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    kept = x.copy()
    g = sg.grad(pf.einsum_view)(x)
    check_close(g, numerical_grad(pf.einsum_view, kept.copy()))     # g[0, 0] is cos(0), not cos(1)
    np.testing.assert_array_equal(x, kept)                            # x[0, 0] was set to 0


# ================================================================== batching

def test_batching_batchable_rules():
    assert batch_safety.batchable(registry.adjoint_rule(np.multiply))
    assert batch_safety.batchable(registry.adjoint_rule(np.sin))
    assert not batch_safety.batchable(registry.adjoint_rule(np.linalg.inv))


def test_batching_batched_vjp_equals_the_per_example_vjp():
    x, y = rng_array(2, 3), rng_array(3, seed=1)
    rule = registry.adjoint_rule(np.multiply)
    z = x * y
    g = rng_array(4, 2, 3, seed=2)
    batched = instantiate.batched_vjp(rule, {"x", "y"})(g, z, x, y, None, None)
    one = instantiate.vjp(rule, {"x", "y"})
    for k in range(4):
        bx, by = one(g[k], z, x, y, None, None)
        check_close(batched[0][k], bx, rtol=1e-12)
        check_close(batched[1][k], by, rtol=1e-12)
    a = rng_array(3, 3, seed=3) + 3.0 * np.eye(3)
    rule = registry.adjoint_rule(np.linalg.inv)
    z = np.linalg.inv(a)
    g = rng_array(2, 3, 3, seed=4)
    batched = instantiate.batched_vjp(rule, {"a"})(g, z, a)
    for k in range(2):
        check_close(batched[0][k], instantiate.vjp(rule, {"a"})(g[k], z, a)[0], rtol=1e-12)


# ================================================================== codegen

CODEGEN_CASES = [pf.tanh_loop, pf.jumps, pf.calls_helper, pf.elements, pf.activity_mix, pf.nested_jumps]


@pytest.mark.parametrize("f", CODEGEN_CASES)
def test_codegen_source_is_python_that_computes_what_runs(f):
    c = compiled(f)
    src = c.source
    compile(src, "<test>", "exec")
    tree = ast_util.parse(src)
    assert isinstance(tree.body[0], gast.FunctionDef)
    namespace = dict(vars(pf))
    namespace.update(c.injected)
    exec(compile(src, "<test>", "exec"), namespace)
    args = [np.array([0.3, -0.2, 0.9])] + ([4] if f is pf.jumps else [np.array([1.0, 2.0, -1.0])]
                                            if f is pf.activity_mix else [])
    expected = c.joint(*args)
    got = namespace[c._shown.name](*args)
    got = got if isinstance(got, tuple) else (got,)
    for a, b in zip(got, expected):
        check_close(a, b, rtol=1e-14, atol=0)


@pytest.mark.parametrize("f", [pf.tanh_loop, pf.calls_helper, pf.elements])
def test_codegen_split_sweeps_agree_with_the_joint(f):
    c = compiled(f)
    x = np.array([0.3, -0.2, 0.9])
    result = c.fwd(x)
    assert len(result) == len(c.outputs) + 1
    check_close(result[0], f(x), rtol=1e-14)
    grads = c.bwd(result[-1], 1.0)
    check_close(grads[0], c.joint(x)[0], rtol=1e-14)
    joint = c.trees[c._shown.name]
    assert [ast_util.to_source(d).strip() for d in joint.args.defaults] == ["1.0"] * len(c.outputs)


def test_codegen_gradient_def_with_preserve_result():
    c = compiled(pf.tanh_loop)
    fn = c.gradient_function(1, (0,), True)
    ret = c.trees[fn.__name__].body[-1].value
    assert isinstance(ret, gast.Tuple) and len(ret.elts) == 2
    x = np.array([0.3, -0.2, 0.9])
    value, grad = fn(x)
    check_close(value, pf.tanh_loop(x), rtol=1e-14)
    check_close(grad, numerical_grad(pf.tanh_loop, x))
    plain = c.gradient_function(1, (0,), False)
    check_close(plain(x), grad, rtol=1e-14)
    value, grad2 = sg.value_and_grad(pf.tanh_loop)(x)
    check_close(value, pf.tanh_loop(x), rtol=1e-14)
    check_close(grad2, grad, rtol=1e-12)


def test_codegen_shares_the_users_globals():
    c = compiled(pf.tanh_loop)
    assert c.joint_fn.__globals__ is vars(pf)


def test_codegen_errors_name_the_users_line_and_the_listing_is_in_linecache():
    x = np.array([0.3, -0.2])
    with pytest.raises(AssertionError) as info:
        sg.grad(pf.fails_forward)(x)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "%s, line %d" % (FILE, pf.line_of("assert")) in notes
    generated = [tb.tb_frame.f_code.co_filename for tb in _frames(info.value.__traceback__)
                 if tb.tb_frame.f_code.co_filename.startswith("<srcgrad-generated")]
    assert generated and all(linecache.getlines(name) for name in generated)


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


# ================================================================== closure

def test_closure_generated_code_is_a_function_the_compiler_transforms_again():
    c = compiled(pf.tanh_loop)
    again = as_function(c.joint_fn)
    assert isinstance(again, GeneratedFunction)
    src = sg.source(sg.grad(pf.tanh_loop))
    compile(src, "<test>", "exec")
    assert "Reverse sweep" in src


def test_closure_grad_of_grad_matches_finite_differences():
    d1 = sg.grad(pf.scalar_poly)
    d2 = sg.grad(d1)
    for x in (0.7, -1.3):
        h = 1e-5
        assert abs(d1(x) - (pf.scalar_poly(x + h) - pf.scalar_poly(x - h)) / (2 * h)) < 1e-7
        assert abs(d2(x) - (d1(x + h) - d1(x - h)) / (2 * h)) < 1e-6
        assert abs(d2(x) - (-math.sin(x) * x * x + 4.0 * x * math.cos(x) + 2.0 * math.sin(x))) < 1e-10


def test_closure_grad_through_a_gradient_of_array_code():
    x = np.array([0.2, -0.4, 0.6])
    check_close(sg.grad(pf.directional)(x), numerical_grad(pf.directional, x))
