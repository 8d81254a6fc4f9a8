"""srcgrad in a Jupyter notebook: functions defined in cells compile (IPython
registers cell source in linecache), gradients are right, and sg.show renders
HTML. Runs a real kernel through nbclient."""
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

CELLS = [
    "import numpy as np\nimport srcgrad as sg",
    "@sg.function\ndef loss(W, x):\n    h = np.tanh(x @ W)\n    for i in range(2):\n        h = np.sin(h)\n    return np.sum(h ** 2)",
    "W = sg.Variable(np.linspace(-1, 1, 6).reshape(3, 2))\n"
    "x = np.linspace(0, 1, 12).reshape(4, 3)\n"
    "with sg.GradientTape() as tape:\n    y = loss(W, x)\n"
    "g = tape.gradient(y, W).numpy()\n"
    "def numeric(w, eps=1e-6):\n"
    "    out = np.zeros_like(w)\n"
    "    for i in np.ndindex(w.shape):\n"
    "        d = np.zeros_like(w); d[i] = eps\n"
    "        out[i] = (loss(w + d, x) - loss(w - d, x)) / (2 * eps)\n"
    "    return out\n"
    "print('max error', np.max(np.abs(g - numeric(W.numpy()))))",
    "sg.show(loss)",
]


def test_notebook_cells_compile_and_differentiate():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3")
    client.execute()
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    max_error = float(text.split("max error")[1].split()[0])
    assert max_error < 1e-7, text
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert html and "dlossdW" in html[0] and "bh" in html[0]
