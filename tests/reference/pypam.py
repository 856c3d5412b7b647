"""Run the PyPAM reference (``pypam_levels.py`` in ``.venv-pypam``) from the project's venv.

PyPAM is never imported here: the request goes to the reference's own interpreter as a
JSON file and the levels come back as an .npz. ``scripts/pypam_venv`` builds the venv;
``SPECSCOPE_PYPAM_VENV`` names another one.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("pypam_levels.py")
STAMP = ".requirements.sha256"


class PyPAMReferenceError(RuntimeError):
    """The reference refused a request or failed; the message is its one line."""


def venv_dir() -> Path:
    """Return the reference venv's folder (``SPECSCOPE_PYPAM_VENV`` or ``.venv-pypam``)."""
    return Path(os.environ.get("SPECSCOPE_PYPAM_VENV") or ROOT / ".venv-pypam")


def skip_reason() -> str | None:
    """Return why the reference cannot run (for ``pytest.skip``), or None when it can."""
    venv = venv_dir()
    if not (venv / "bin" / "python").is_file() or not (venv / STAMP).is_file():
        return f"PyPAM reference venv {venv} is not built (run scripts/pypam_venv)"
    return None


def pypam_available() -> bool:
    """Return True when the reference venv is built."""
    return skip_reason() is None


def run_pypam(request: dict, workdir, timeout: float = 900.0) -> dict[str, np.ndarray]:
    """Compute band levels with PyPAM.

    Parameters
    ----------
    request : dict
        The request of ``pypam_levels.py`` (its docstring); ``output`` is set here.
    workdir : path-like
        Folder for the request and the result files.
    timeout : float
        Seconds the reference may take.

    Returns
    -------
    dict of numpy.ndarray
        The arrays ``pypam_levels.py`` writes (``band_db``, ``band_centre``, ``time``...).

    Raises
    ------
    PyPAMReferenceError
        The venv is missing, or the reference refused the request or failed.
    """
    reason = skip_reason()
    if reason is not None:
        raise PyPAMReferenceError(reason)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "pypam-levels.npz"
    req_path = workdir / "pypam-request.json"
    req_path.write_text(json.dumps({**request, "output": str(out)}, indent=1))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [str(venv_dir() / "bin" / "python"), str(SCRIPT), str(req_path)],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir, check=False,
    )
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit status {proc.returncode}"
        raise PyPAMReferenceError(last)
    with np.load(out, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
