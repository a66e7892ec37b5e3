"""trainsim from Python: simulate LLM training iterations and get the CLI's ``--json`` results as dicts.

    import trainsim
    r = trainsim.run("examples/tiny-8-h100.yaml", set={"parallelism.tensor": 4})
    r["iteration_time_s"], r["breakdown"]["compute"]

Each function mirrors a ``trainsim`` command (run, memory, nccl-test, sweep, tune) and returns what that command's
``--json`` prints, as Python objects with the same field names (``../shared/spec/scenario.md``; docs/python.md).

A scenario is a path (str or os.PathLike) to a YAML file, or a dict holding the same structure as one. Overrides
are given as ``set=``: a dict ``{"parallelism.tensor": 4, "cluster.gpu": "H100-SXM"}`` or a list of ``"key=value"``
strings, exactly as ``--set``. A str value is YAML text, as after ``--set KEY=`` (so ``"4"`` is the number 4); other
values (numbers, booleans, None, lists, dicts) are written as YAML for you.

Errors: ``trainsim.ScenarioError`` (also a ValueError; ``.key``, ``.file``, ``.detail``) for invalid input,
``trainsim.OutOfMemoryError`` when the job does not fit (``allow_oom=True`` goes on), ``trainsim.DeadlockError``,
all ``trainsim.Error``; ``trainsim.InternalError`` (a RuntimeError, not an Error) for a bug in trainsim; TypeError
and ValueError for arguments of the wrong type or range. The GIL is released while simulating, and Ctrl-C stops a
``run`` or ``nccl_test`` within about 0.1 s (KeyboardInterrupt); ``sweep`` and ``tune`` finish the points already
started first.
"""

import json
import numbers
import os
from collections.abc import Iterable, Mapping

from . import _trainsim
from ._trainsim import DeadlockError, Error, InternalError, OutOfMemoryError, ScenarioError

__version__ = _trainsim.__version__
__all__ = [
    "run",
    "memory",
    "nccl_test",
    "sweep",
    "tune",
    "Error",
    "ScenarioError",
    "OutOfMemoryError",
    "DeadlockError",
    "InternalError",
]

# The label a dict scenario gets in place of a file name (errors' .file, the result's "scenario" field). Relative
# paths inside it (compute.database, nccl.NCCL_TOPO_FILE, a model's hf_config) resolve against the working directory.
DICT_LABEL = "<dict>"


def _plain(value):
    """json.dumps' fallback: numpy scalars and arrays as Python numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a scenario value (expected str, number, bool, None, list or dict)")


def _yaml_text(value, what):
    """A Python value as the YAML text `--set KEY=` takes; a str is already YAML text."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, numbers.Number, list, tuple, Mapping)) or hasattr(value, "tolist"):
        try:
            return json.dumps(value, default=_plain, allow_nan=False)
        except ValueError as e:  # nan, inf: no YAML number for them either
            raise ValueError(f"{what}: {value!r} is not a finite number") from e
        except TypeError as e:
            raise TypeError(f"{what}: {e}") from None
    raise TypeError(f"{what}: {type(value).__name__} is not a scenario value (str, number, bool, None, list or dict)")


def _source(scenario):
    """(label, text): a path and None, or the dict's label and its YAML text (JSON is YAML)."""
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    if isinstance(scenario, Mapping):
        for key in scenario:
            if not isinstance(key, str):
                raise TypeError(f"scenario: keys must be str, got {type(key).__name__} {key!r}")
        try:
            return DICT_LABEL, json.dumps(scenario, default=_plain, allow_nan=False)
        except ValueError as e:
            raise ValueError(f"scenario: {e}") from None
        except TypeError as e:
            raise TypeError(f"scenario: {e}") from None
    raise TypeError(f"scenario: expected a path (str or os.PathLike) or a dict, got {type(scenario).__name__}")


def _key_values(arg, name, join_values):
    """A dict {key: value} (or {key: [values]} when join_values) or a list of "key=..." strings -> "key=..." list."""
    if arg is None:
        return []
    if isinstance(arg, Mapping):
        out = []
        for key, value in arg.items():
            if not isinstance(key, str):
                raise TypeError(f"{name}: keys must be str, got {type(key).__name__} {key!r}")
            what = f"{name}[{key!r}]"
            out.append(f"{key}={_values_text(value, what) if join_values else _yaml_text(value, what)}")
        return out
    if isinstance(arg, Iterable) and not isinstance(arg, (str, bytes)):
        out = []
        for item in arg:
            if isinstance(item, str):
                out.append(item)
            elif join_values and isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                out.append(f"{item[0]}={_values_text(item[1], f'{name}[{item[0]!r}]')}")
            else:
                raise TypeError(f"{name}: expected 'key=value' strings, got {type(item).__name__} {item!r}")
        return out
    if join_values:
        expected = "a dict {key: [values]} or a list of 'key=v1,v2' strings"
    else:
        expected = "a dict {key: value} or a list of 'key=value' strings"
    raise TypeError(f"{name}: expected {expected}, got {type(arg).__name__}")


def _values_text(values, what):
    """Values of a swept or searched key as `--vary` writes them: "100,200,400" (a str is taken as written)."""
    if isinstance(values, str):
        return values
    if not isinstance(values, Iterable) or isinstance(values, (bytes, Mapping)):
        raise TypeError(f"{what}: expected a list of values or a 'v1,v2' or 'a:b:step' string, "
                        f"got {type(values).__name__}")
    texts = []
    for v in values:
        text = _yaml_text(v, what)
        # A comma inside a plain value would split it: quote it (lists and dicts are bracketed already).
        if isinstance(v, str) and "," in text and not text.startswith(("[", "{", '"', "'")):
            text = json.dumps(text)
        texts.append(text)
    return ",".join(texts)


def _int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value}")
    return int(value)


def _bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected True or False, got {type(value).__name__}")
    return value


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)


def _size(value, name):
    """A byte size: an int, or a str with an optional K, M or G ("64K", "8G")."""
    if isinstance(value, str):
        return value
    return str(_int(value, name, 0))


def run(scenario, *, set=None, per_rank=False, allow_oom=False, explain=False, html=None):
    """Simulates one iteration; returns the `trainsim run --json` object as a dict.

    per_rank: simulate every rank (--per-rank); allow_oom: simulate even if the memory model says the job does not
    fit (--allow-oom; else OutOfMemoryError); explain: add the critical rank's longest ops and collectives
    (--explain); html: a path (str or os.PathLike) to write the run's self-contained HTML page to (--html; Error
    naming html when it cannot be written). The result's simulation.wall_s is the wall time of this call's
    simulation, as in the CLI.
    """
    label, text = _source(scenario)
    if html is not None:
        if not isinstance(html, (str, os.PathLike)):
            raise TypeError(f"html: expected a path (str or os.PathLike), got {type(html).__name__}")
        html = os.fspath(html)
    return _trainsim.run(label, text, _key_values(set, "set", False), _bool(per_rank, "per_rank"),
                         _bool(allow_oom, "allow_oom"), _bool(explain, "explain"), html)


def memory(scenario, *, set=None, allow_oom=False):
    """Every pipeline stage's memory per GPU, without simulating: the `trainsim memory --json` object.

    When the worst stage does not fit, raises OutOfMemoryError (its .result holds the table), as the CLI exits 1;
    allow_oom=True returns the table (its "fits" is False).
    """
    label, text = _source(scenario)
    return _trainsim.memory(label, text, _key_values(set, "set", False), _bool(allow_oom, "allow_oom"))


def nccl_test(scenario, *, op=None, minbytes=8, maxbytes=8, stepfactor=2, stepbytes=None, datatype="float",
              redop="sum", root=0, gpus=None, agg_iters=1, set=None, full=False):
    """The table nccl-tests would print on the scenario's cluster: one dict per message size.

    The arguments are nccl-tests' (-b minbytes, -e maxbytes, -f stepfactor, -i stepbytes, -d datatype, -o redop,
    -r root, -m agg_iters) and `trainsim nccl-test`'s (op, default the scenario's collective.op else "all_reduce";
    gpus, default cluster.num_gpus). Sizes are ints or strs such as "64K", "8G". Returns the rows of
    `trainsim nccl-test --json`; full=True returns the whole object (op, gpus, nodes, gpus_per_node, gpu,
    network_model, rows).
    """
    label, text = _source(scenario)
    if op is not None and not isinstance(op, str):
        raise TypeError(f"op: expected a collective name such as 'all_reduce', got {type(op).__name__}")
    for name, value in (("datatype", datatype), ("redop", redop)):
        if not isinstance(value, str):
            raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
    table = _trainsim.nccl_test(
        label, text, _key_values(set, "set", False), op, _size(minbytes, "minbytes"), _size(maxbytes, "maxbytes"),
        _number(stepfactor, "stepfactor"), None if stepbytes is None else _size(stepbytes, "stepbytes"), datatype,
        redop, _int(root, "root", 0), None if gpus is None else _int(gpus, "gpus", 0), _int(agg_iters, "agg_iters", 1))
    return table if _bool(full, "full") else table["rows"]


def plan(scenario, *, tokens=None, iterations=None, days=None, trials=0, seed=0, set=None):
    """The whole training run (`trainsim plan --json`): days to train, goodput, interruptions by cause, checkpoints,
    energy and cost (docs/run-planning.md).

    Give exactly one of tokens (a number, or a str such as "15T"), iterations or days. trials: Monte-Carlo runs for
    p10/p50/p90 of the days (seeded by seed: the same seed gives the same numbers).
    """
    label, text = _source(scenario)
    given = [(name, v) for name, v in (("tokens", tokens), ("iterations", iterations), ("days", days)) if v is not None]
    if len(given) != 1:
        raise ValueError("plan: give exactly one of tokens, iterations or days")
    name, value = given[0]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        amount = str(_int(value, name, 1))
    elif isinstance(value, str) and name == "tokens":
        amount = value
    else:
        amount = repr(_number(value, name))
    return _trainsim.plan(label, text, _key_values(set, "set", False), name, amount, _int(trials, "trials", 0),
                          _int(seed, "seed", 0))


def sweep(scenario, vary=None, *, zip=None, zip_position=0, set=None, threads=0, allow_oom=False):
    """Simulates every combination of some keys' values; returns one dict per point, ready for pandas.DataFrame.

    vary: {key: [values]} (the first key varies slowest) or a list of `--vary` strings ("cluster.nic_gbps=100,200"
    or "=100:400:100") or (key, values) pairs. zip: keys that change together, in the same forms (one axis, placed
    before the vary axis number zip_position). set: overrides for every point. Each row has the keys' values
    (typed: 400, not "400"), "status" (ok, invalid, out_of_memory, failed), "reason", then every scalar field of the
    point's `run --json` result by its dotted name ("breakdown.compute"), None where a point has none: the CSV of
    `trainsim sweep --csv`. Points that fail are rows with their status, not exceptions. threads: 0 = all cores.
    """
    label, text = _source(scenario)
    vary_texts = _key_values(vary, "vary", True)
    zip_texts = _key_values(zip, "zip", True)
    return _trainsim.sweep(label, text, _key_values(set, "set", False), vary_texts, zip_texts,
                           _int(zip_position, "zip_position", 0), _int(threads, "threads", 0),
                           _bool(allow_oom, "allow_oom"))


def tune(scenario, *, top=5, objective="tokens_per_s", gpu_hour_price=None, tokens=None, space=None, set=None,
         threads=0, allow_tp_beyond_scale_up=False, full=False):
    """Searches TP/PP/DP/CP/EP, micro-batch, recompute and ZeRO for the best configurations that fit (docs/tune.md).

    objective: "tokens_per_s" (maximise), "cost" (needs gpu_hour_price, USD, or tokens: the whole run's cost),
    "time_to_train", "days" or "energy" (need tokens, a number or a str such as "15T"; days and energy are of the
    whole run: failures, restarts, checkpoints, as `trainsim plan` gives them). space: {key: [values]} or `--space` strings replacing a key's default values.
    set: overrides for every candidate (on a searched key it pins it). Returns the `ranked` list of
    `trainsim tune --json`, best first: {rank, configuration, overrides, objective, result}; full=True returns the
    whole object (counts, explanations, ...). Raises Error when no configuration is ranked, with the CLI's reason.
    """
    label, text = _source(scenario)
    if not isinstance(objective, str):
        raise TypeError(f"objective: expected 'tokens_per_s', 'cost', 'time_to_train', 'days' or 'energy', "
                        f"got {type(objective).__name__}")
    price = None if gpu_hour_price is None else _number(gpu_hour_price, "gpu_hour_price")
    if isinstance(tokens, numbers.Integral) and not isinstance(tokens, bool):
        tokens = str(_int(tokens, "tokens", 1))
    elif tokens is not None and not isinstance(tokens, str):
        tokens = repr(_number(tokens, "tokens"))
    out = _trainsim.tune(label, text, _key_values(set, "set", False), _key_values(space, "space", True),
                         _int(top, "top", 1), objective, price, tokens, _int(threads, "threads", 0),
                         _bool(allow_tp_beyond_scale_up, "allow_tp_beyond_scale_up"))
    return out if _bool(full, "full") else out["ranked"]
