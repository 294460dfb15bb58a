"""What every result of the Python API shares (sparsity_gui.api): arrays as numpy,
``to_pandas()``, ``save(dir)`` with the command line that writes the same files, and the
conversions of arguments as the CLI reads its text."""

from __future__ import annotations

import inspect
import operator
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.core.files import ResultDir

if TYPE_CHECKING:
    import pandas


# --- what every result shares ---------------------------------------------------------------
class Result:
    """A finished run: arrays as numpy, ``to_pandas()``, ``save(dir)``.

    A new kind of result (e.g. the scaling sweep) names its CLI command, keeps the options
    it was called with, and says how to write its files and what its table is."""

    command: str  # the CLI command whose files save() writes
    options: dict[str, Any]  # the options given that differ from the defaults, in order

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        """The CLI command that writes the same files into ``out`` (with save()'s options)."""
        argv = cli_argv({**self.options, **(save_options or {})})
        return shlex.join(["sparsity-gui", self.command, *argv, "--out", str(out)])

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """Write the result files into the folder ``out`` (new or empty; ``force``
        replaces a non-empty one), atomically. Returns its path. Raises ValueError for an
        output location that cannot be used and OSError (naming the file) for a failed
        write; either way nothing is left behind."""
        return self._save(out, force)

    def _save(
        self,
        out: str | Path,
        force: bool,
        save_options: Mapping[str, Any] | None = None,
        **write_options: Any,
    ) -> Path:
        result_dir = ResultDir(out, as_flag("force", force))
        try:
            self._write(result_dir, self.command_line(out, save_options), **write_options)
            result_dir.commit()
        except BaseException:
            result_dir.abort()
            raise
        return result_dir.out

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        raise NotImplementedError

    def _summary(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:  # short: a notebook shows it after each call
        return f"<{type(self).__name__} {self._summary()}; files as: {self.command_line('DIR')}>"

    def _table(self) -> tuple[Sequence[str], np.ndarray | dict[str, np.ndarray]]:
        raise NotImplementedError

    def to_pandas(self) -> pandas.DataFrame:
        """The result's main table as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "to_pandas() needs pandas, which sparsity-gui does not install: pip install pandas"
            ) from None
        columns, data = self._table()
        if isinstance(data, dict):
            return pandas.DataFrame({name: data[name] for name in columns})
        return pandas.DataFrame(data, columns=list(columns))


def given_options(fn: Callable[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``fn`` that differ from its defaults (the CLI's), in its order."""
    params = inspect.signature(fn).parameters
    return {
        name: values[name]
        for name, p in params.items()
        if name in values and not same_value(values[name], p.default)
    }


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def api_call(
    fn: str,
    options: Mapping[str, Any],
    out: str | Path,
    save_options: Mapping[str, Any] | None,
    array_note: str,
) -> str:
    """The Python call that makes a result's files when no CLI command can (a W(0) array,
    live changes): the options as Python, an array by its dtype and shape and ``array_note``."""
    args = ", ".join(
        f"{k}=<{v.dtype} array {' x '.join(map(str, v.shape))}{array_note}>"
        if isinstance(v, np.ndarray)
        else f"{k}={v!r}"
        for k, v in options.items()
    )
    saving = "".join(f", {k}={v!r}" for k, v in (save_options or {}).items())
    return f"sparsity_gui.api.{fn}({args}).save({str(out)!r}{saving})"


def cli_argv(options: dict[str, Any]) -> list[str]:
    """The CLI options of ``options``: every value as the text that reads back as it (the
    grids' front doors write their command lines the same way: core/grid.option_argv)."""
    from sparsity_gui.core.grid import option_argv

    return option_argv(options)


def as_whole(value: Any) -> Any:
    """A whole number as an int, as the CLI reads '1e6' (1e6, np.int64(5) -> int); any other
    value unchanged, for the checks to name."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        return value


def as_path(value: Any) -> str:
    """A file's path as text (a str or a pathlib.Path); anything else refused, naming w0."""
    if isinstance(value, (str, os.PathLike)):
        return str(os.fspath(value))
    from sparsity_gui.core.errors import InputError

    raise InputError("w0", f"must be a file's path or a numpy array, got {type(value).__name__}")


def as_flag(name: str, value: Any) -> bool:
    """A True/False option (numpy's bool too) as a bool; anything else a ValueError naming
    ``name`` (a string 'no' would be true)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    from sparsity_gui.core.errors import InputError

    raise InputError(name, f"must be True or False, got {value!r}")


def as_number(value: Any) -> Any:
    """numpy floats and ints as Python floats (as the CLI reads its text); others unchanged."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return value


# --- what plot() and movie() mean alike in both models ------------------------------------
def layout_takes_no_ax() -> ValueError:
    """The one error of plot("layout", ax=...) in every result."""
    from sparsity_gui.core.errors import InputError

    return InputError("panel", "the layout is a figure of its own: call plot('layout') without ax")


def movie_width_inches(width: Any) -> float | None:
    """movie(width=): "single" (a journal's column: the style's own size, None) or "double"
    (the text width, 7 in); anything else a ValueError naming width."""
    from sparsity_gui.core.errors import InputError
    from sparsity_gui.figures.style import DOUBLE_COLUMN, WIDTHS

    if not isinstance(width, str) or width not in WIDTHS:
        raise InputError("width", f"must be one of {', '.join(WIDTHS)}, got {width!r}")
    return None if width == "single" else DOUBLE_COLUMN
