"""Re-execute chapters in place, deterministically (``make renotebook``).

Each notebook runs top to bottom in a fresh kernel of the current environment,
in its own folder (as Jupyter Book and nbval run it).  Cell timing metadata is
not recorded and any already stored is stripped, so refreshing twice leaves
``git diff`` empty.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def _merge_streams(outputs):
    """Join consecutive chunks of one stream: how the kernel splits them depends on timing."""
    merged = []
    for out in outputs:
        if (
            out.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(out["text"])
        else:
            merged.append(out)
    return merged


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=1800, record_timing=False, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
            for out in cell.get("outputs", []):
                if out.get("name") == "stderr":
                    raise SystemExit(f"{path}: a cell wrote to stderr:\n{out.get('text', '')}")
                if out.get("output_type") == "error":  # e.g. a figure that fails to render
                    raise SystemExit(f"{path}: a cell produced an error: {out.get('ename')}: {out.get('evalue')}")
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    os.environ.pop("MPLBACKEND", None)  # the kernel must use the inline backend
    paths = [Path(a) for a in argv] or sorted(Path("book").rglob("*.ipynb"))
    for path in paths:
        if "_build" in path.parts or ".ipynb_checkpoints" in path.parts:
            continue
        print(f"executing {path}", flush=True)
        refresh(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
