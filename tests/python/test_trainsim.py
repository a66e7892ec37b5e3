"""The Python module against the CLI: the same results as `trainsim ... --json`, overrides, dict scenarios, sweeps,
tune, errors with their keys, bad arguments as TypeError. Run by ctest (tests/python/run-pytest) with PYTHONPATH
at the build tree's package and TRAINSIM_BINARY at the CLI."""

import copy
import csv
import io
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import trainsim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(ROOT, "examples", "tiny-8-h100.yaml")
BINARY = os.environ.get("TRAINSIM_BINARY", os.path.join(ROOT, "build", "trainsim"))

# examples/tiny-8-h100.yaml as a dict.
TINY_DICT = {
    "model": {"preset": "gpt3-1.3b"},
    "training": {"global_batch_size": 32, "micro_batch_size": 2, "precision": "bf16"},
    "parallelism": {"tensor": 2, "pipeline": 1, "sequence_parallel": True},
    "cluster": {"gpu": "H100-SXM", "num_gpus": 8, "gpus_per_node": 8, "nics_per_node": 8, "nic_gbps": 400},
}


def cli(*args, status=0):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == status, done.stderr
    return done.stdout


def cli_json(*args, status=0):
    return json.loads(cli(*args, status=status))


def without_wall_time(result):
    """The result less simulation.wall_s, the one field that differs run to run."""
    r = copy.deepcopy(result)
    r["simulation"].pop("wall_s")
    return r


# --- run ---


def test_run_equals_the_cli_json():
    ours = trainsim.run(TINY)
    theirs = cli_json("run", TINY, "--json")
    assert list(ours) == list(theirs)  # the same fields in the same order
    assert without_wall_time(ours) == without_wall_time(theirs)
    assert ours["iteration_time_s"] > 0


def test_run_writes_the_cli_html_page_of_the_same_result(tmp_path):
    def embedded_result(html):
        opening = '<script type="application/json" id="trainsim-result">'
        start = html.index(opening) + len(opening)
        return json.loads(html[start:html.index("</script>", start)])

    page = tmp_path / "report.html"
    ours = trainsim.run(TINY, html=page)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert embedded_result(html) == ours  # the result this call returned, as `run --html` embeds `--json`'s
    # The CLI's page of the same scenario: the same result (less the wall time) and the same sections.
    cli("run", TINY, "--html", str(tmp_path / "cli.html"))
    theirs = (tmp_path / "cli.html").read_text()
    assert without_wall_time(embedded_result(theirs)) == without_wall_time(ours)
    ids = re.compile(r' id="([a-z0-9-]+)"')
    assert ids.findall(html) == ids.findall(theirs) and len(ids.findall(html)) > 5
    with pytest.raises(trainsim.Error, match="html: .*nonexistent-dir"):
        trainsim.run(TINY, html="/nonexistent-dir/report.html")
    with pytest.raises(TypeError, match="html: expected a path"):
        trainsim.run(TINY, html=3)


def test_run_options_equal_the_cli_flags():
    ours = trainsim.run(TINY, per_rank=True, explain=True)
    theirs = cli_json("run", TINY, "--json", "--per-rank", "--explain")
    assert without_wall_time(ours) == without_wall_time(theirs)
    assert "explain" in ours and "explain" not in trainsim.run(TINY)


def test_overrides_as_dict_and_as_strings_equal_the_cli_set():
    theirs = cli_json("run", TINY, "--json", "--set", "parallelism.tensor=4", "--set", "cluster.nic_gbps=200")
    as_dict = trainsim.run(TINY, set={"parallelism.tensor": 4, "cluster.nic_gbps": 200})
    as_strings = trainsim.run(TINY, set=["parallelism.tensor=4", "cluster.nic_gbps=200"])
    assert without_wall_time(as_dict) == without_wall_time(theirs)
    assert without_wall_time(as_strings) == without_wall_time(theirs)
    assert as_dict["iteration_time_s"] != trainsim.run(TINY)["iteration_time_s"]


def test_override_values_of_every_python_type():
    r = trainsim.run(TINY, set={"parallelism.sequence_parallel": False, "training.recompute": "full",
                                "parallelism.data": None, "cluster.nic_gbps": 200.0})
    theirs = cli_json("run", TINY, "--json", "--set", "parallelism.sequence_parallel=false",
                      "--set", "training.recompute=full", "--set", "cluster.nic_gbps=200")
    assert without_wall_time(r) == without_wall_time(theirs)


def test_dict_scenario_equals_its_file():
    from_dict = without_wall_time(trainsim.run(TINY_DICT))
    from_file = without_wall_time(trainsim.run(TINY))
    assert from_dict.pop("scenario") == "<dict>"
    from_file.pop("scenario")
    assert from_dict == from_file
    # and overrides apply to it as to a file
    assert trainsim.run(TINY_DICT, set={"parallelism.tensor": 4})["iteration_time_s"] == (
        trainsim.run(TINY, set={"parallelism.tensor": 4})["iteration_time_s"])


def test_path_like_scenario():
    import pathlib
    assert without_wall_time(trainsim.run(pathlib.Path(TINY))) == without_wall_time(trainsim.run(TINY))


# --- memory, nccl_test ---


def test_memory_equals_the_cli_json():
    assert trainsim.memory(TINY) == cli_json("memory", TINY, "--json")
    assert trainsim.memory(TINY, set={"training.recompute": "full"}) == cli_json(
        "memory", TINY, "--json", "--set", "training.recompute=full")


def test_memory_that_does_not_fit_raises_with_the_table_unless_allowed():
    big = {"model.preset": "gpt3-22b"}
    with pytest.raises(trainsim.OutOfMemoryError, match="does not fit") as caught:
        trainsim.memory(TINY, set=big)
    assert caught.value.result["fits"] is False
    table = trainsim.memory(TINY, set=big, allow_oom=True)
    assert table == caught.value.result
    assert table == cli_json("memory", TINY, "--json", "--allow-oom", "--set", "model.preset=gpt3-22b")


def test_plan_equals_the_cli_json():
    storage = {"training.resilience.storage_GBps": 100}
    mine = trainsim.plan(TINY, tokens="2B", trials=20, seed=5, set=storage)
    assert mine == cli_json("plan", TINY, "--tokens", "2B", "--trials", "20", "--seed", "5", "--json",
                            "--set", "training.resilience.storage_GBps=100")
    assert mine["tokens"] == 2e9
    by_iterations = trainsim.plan(TINY, iterations=1000, set=storage)
    assert by_iterations["iterations"] == 1000
    assert trainsim.plan(TINY, days=2.5, set=storage)["wall_days"] == pytest.approx(2.5, rel=1e-3)


def test_plan_refuses_a_size_given_twice_or_not_at_all_and_names_the_storage_key():
    with pytest.raises(ValueError, match="exactly one"):
        trainsim.plan(TINY, tokens="1T", days=3)
    with pytest.raises(ValueError, match="exactly one"):
        trainsim.plan(TINY)
    with pytest.raises(trainsim.Error, match="tokens"):
        trainsim.plan(TINY, tokens="15X", set={"training.resilience.storage_GBps": 100})
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.plan(TINY, tokens="1B")
    assert caught.value.key == "training.resilience.storage_GBps"


def test_nccl_test_rows_equal_the_cli_json():
    theirs = cli_json("nccl-test", TINY, "--op", "all_gather", "-b", "1M", "-e", "64M", "-f", "4", "--gpus", "8",
                      "--json")
    rows = trainsim.nccl_test(TINY, op="all_gather", minbytes="1M", maxbytes=64 << 20, stepfactor=4, gpus=8)
    assert rows == theirs["rows"]
    assert [r["size_bytes"] for r in rows] == [1 << 20, 4 << 20, 16 << 20, 64 << 20]
    assert trainsim.nccl_test(TINY, op="all_gather", minbytes="1M", maxbytes="64M", stepfactor=4, full=True) == theirs


# --- sweep ---


def test_sweep_gives_one_row_per_point_with_the_varied_key():
    rows = trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100, 200, 400]}, threads=2)
    assert [r["cluster.nic_gbps"] for r in rows] == [100, 200, 400]
    assert all(r["status"] == "ok" for r in rows)
    for r in rows:  # each point is the run with that override
        assert r["iteration_time_s"] == trainsim.run(TINY, set={"cluster.nic_gbps": r["cluster.nic_gbps"]})[
            "iteration_time_s"]
    assert len({tuple(r) for r in rows}) == 1  # every row has every column


def test_sweep_equals_the_cli_csv():
    rows = trainsim.sweep(TINY, vary=["parallelism.tensor=1,2,4"], zip={"cluster.nic_gbps": [100, 400],
                                                                        "cluster.nics_per_node": [4, 8]},
                          set={"training.micro_batch_size": 1})
    # --zip before --vary: the zipped axis first, as zip_position=0
    text = cli("sweep", TINY, "--zip", "cluster.nic_gbps=100,400", "--zip", "cluster.nics_per_node=4,8", "--vary",
               "parallelism.tensor=1,2,4", "--set", "training.micro_batch_size=1", "--csv", "-")
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(table) == 6
    assert [r["cluster.nic_gbps"] for r in rows] == [100, 100, 100, 400, 400, 400]  # the first axis varies slowest
    assert [r["parallelism.tensor"] for r in rows] == [1, 2, 4] * 2
    for ours, theirs in zip(rows, table):
        assert list(ours) == list(theirs)
        for column, cell in theirs.items():
            value = ours[column]
            if cell == "":
                assert value is None or value == "", column
            elif isinstance(value, bool):
                assert cell == ("true" if value else "false"), column
            elif isinstance(value, (int, float)):
                assert float(cell) == value, column
            else:
                assert cell == value, column


def test_sweep_reports_failed_points_as_rows():
    rows = trainsim.sweep(TINY, vary={"parallelism.tensor": [2, 3]})
    assert [r["status"] for r in rows] == ["ok", "invalid"]
    assert "tensor 3" in rows[1]["reason"]
    assert rows[1]["iteration_time_s"] is None


def test_sweep_rows_make_a_data_frame():
    pd = pytest.importorskip("pandas")  # not needed by trainsim: only checked where it is installed
    frame = pd.DataFrame(trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100, 400], "parallelism.tensor": [2, 4]}))
    assert frame.shape[0] == 4
    assert pd.api.types.is_integer_dtype(frame["cluster.nic_gbps"])
    assert pd.api.types.is_float_dtype(frame["iteration_time_s"])
    table = frame.pivot(index="cluster.nic_gbps", columns="parallelism.tensor", values="iteration_time_s")
    assert table.shape == (2, 2)


def test_sweep_value_forms():
    a = trainsim.sweep(TINY, vary={"cluster.nic_gbps": "100:300:100"})
    b = trainsim.sweep(TINY, vary=[("cluster.nic_gbps", (100, 200, 300))])
    assert a == b and [r["cluster.nic_gbps"] for r in a] == [100, 200, 300]
    gpus = trainsim.sweep(TINY, vary={"cluster.gpu": ["H100-SXM", "A100-80GB"]})
    assert [r["cluster.gpu"] for r in gpus] == ["H100-SXM", "A100-80GB"]


# --- tune ---

SMALL_SPACE = {"parallelism.pipeline": [1], "training.micro_batch_size": [1, 2]}


def test_tune_returns_ranked_rows_as_the_cli():
    ranked = trainsim.tune(TINY, top=3, space=SMALL_SPACE)
    theirs = cli_json("tune", TINY, "--top", "3", "--json", "--space", "parallelism.pipeline=1", "--space",
                      "training.micro_batch_size=1,2")
    assert [r["rank"] for r in ranked] == [1, 2, 3]
    objectives = [r["objective"] for r in ranked]
    assert objectives == sorted(objectives, reverse=True)  # tokens/s: best first
    assert ranked == theirs["ranked"]
    full = trainsim.tune(TINY, top=3, space=SMALL_SPACE, full=True)
    assert full["counts"] == theirs["counts"] and full["explanations"] == theirs["explanations"]


def test_tune_cost_objective():
    ranked = trainsim.tune(TINY, top=2, space=SMALL_SPACE, objective="cost", gpu_hour_price=2.5)
    assert len(ranked) == 2 and ranked[0]["objective"] <= ranked[1]["objective"]  # cost: least first


def test_tune_days_objective_ranks_the_whole_run():
    storage = {"training.resilience.storage_GBps": 100}
    ranked = trainsim.tune(TINY, top=2, space=SMALL_SPACE, objective="days", tokens="1B", set=storage)
    assert len(ranked) == 2 and ranked[0]["objective"] <= ranked[1]["objective"]  # days: least first
    assert ranked[0]["objective"] == ranked[0]["result"]["run_plan"]["days"]
    with pytest.raises(trainsim.Error, match="tokens: objective days needs"):
        trainsim.tune(TINY, objective="days", set=storage)


def test_tune_with_nothing_that_fits_raises():
    with pytest.raises(trainsim.Error, match="no configuration fits"):
        trainsim.tune(TINY, set={"model.preset": "gpt3-175b"}, space={"parallelism.pipeline": [1]})


# --- errors ---


def test_bad_override_value_is_a_scenario_error_naming_the_key_and_the_override():
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.run(TINY, set={"parallelism.tensor": "abc"})
    e = caught.value
    assert isinstance(e, ValueError) and isinstance(e, trainsim.Error)
    assert e.key == "parallelism.tensor"
    assert e.file == "--set parallelism.tensor=abc"
    assert "parallelism.tensor" in str(e)


def test_unknown_key_is_a_scenario_error():
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.run(TINY, set={"parallelism.tensr": 2})
    assert "tensr" in caught.value.key


def test_bad_dict_scenario_names_the_dict_and_the_key():
    bad = copy.deepcopy(TINY_DICT)
    bad["training"]["micro_batch_size"] = -1
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.run(bad)
    assert caught.value.file == "<dict>"
    assert caught.value.key == "training.micro_batch_size"


def test_missing_file_is_a_scenario_error_naming_it():
    for call in (trainsim.run, trainsim.memory, trainsim.nccl_test,
                 lambda p: trainsim.sweep(p, vary={"cluster.nic_gbps": [100]}), trainsim.tune):
        with pytest.raises(trainsim.ScenarioError) as caught:
            call("no/such/file.yaml")
        assert caught.value.file == "no/such/file.yaml"


def test_out_of_memory_run():
    with pytest.raises(trainsim.OutOfMemoryError) as caught:
        trainsim.run(TINY, set={"model.preset": "gpt3-22b"})
    assert isinstance(caught.value, trainsim.Error) and not isinstance(caught.value, ValueError)
    assert "does not fit" in str(caught.value)
    r = trainsim.run(TINY, set={"model.preset": "gpt3-22b"}, allow_oom=True)
    assert r["memory"]["fits"] is False


def test_argument_errors_of_the_commands_name_the_argument():
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.nccl_test(TINY, op="all_scatter")
    assert caught.value.key == "op"
    with pytest.raises(trainsim.ScenarioError) as caught:
        trainsim.nccl_test(TINY, minbytes="8Q")
    assert caught.value.key == "minbytes"
    with pytest.raises(trainsim.Error, match="vary"):
        trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100, 100]})  # a value twice
    with pytest.raises(trainsim.Error, match="gpu_hour_price"):
        trainsim.tune(TINY, gpu_hour_price=2.5)  # without objective="cost"


@pytest.mark.parametrize("call, says", [
    (lambda: trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100, 100]}), "vary 'cluster.nic_gbps=100,100'"),
    (lambda: trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100]}, zip=["parallelism.tensor=1,2", "cluster.nics_per_node=8"]),
     "zip"),
    (lambda: trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100, 200]}, set={"cluster.nic_gbps": 400}), "set '"),
    (lambda: trainsim.tune(TINY, space=["parallelism.tensor=1,2", "parallelism.tensor=4"]), "space or set"),
])
def test_sweep_and_tune_errors_name_the_keyword_arguments_not_the_cli_flags(call, says):
    with pytest.raises(trainsim.Error) as caught:
        call()
    message = str(caught.value)
    assert says in message
    for flag in ("--vary", "--zip", "--set", "--space"):
        assert flag not in message, message


def test_internal_error_is_not_an_input_error():
    assert issubclass(trainsim.InternalError, RuntimeError)
    assert not issubclass(trainsim.InternalError, trainsim.Error)
    assert issubclass(trainsim.DeadlockError, trainsim.Error)


@pytest.mark.parametrize("call", [
    lambda: trainsim.run(42),
    lambda: trainsim.run(TINY, set=5),
    lambda: trainsim.run(TINY, set={4: 2}),
    lambda: trainsim.run(TINY, set={"parallelism.tensor": object()}),
    lambda: trainsim.run(TINY, per_rank="yes"),
    lambda: trainsim.run({"model": {1, 2}}),
    lambda: trainsim.memory(TINY, allow_oom=1),
    lambda: trainsim.nccl_test(TINY, gpus="8"),
    lambda: trainsim.nccl_test(TINY, stepfactor="2"),
    lambda: trainsim.sweep(TINY, vary=3),
    lambda: trainsim.sweep(TINY, vary={"cluster.nic_gbps": 100}),
    lambda: trainsim.tune(TINY, top=2.5),
    lambda: trainsim.tune(TINY, objective=None),
    lambda: trainsim._trainsim.run(TINY, None, [1, 2], False, False, False),  # the extension's own check
    lambda: trainsim._trainsim.memory(None, None, [], False),
])
def test_bad_argument_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_bad_argument_values_raise_value_error():
    with pytest.raises(ValueError):
        trainsim.sweep(TINY, vary={"cluster.nic_gbps": [100]}, threads=-1)
    with pytest.raises(ValueError):
        trainsim.tune(TINY, top=0)
    with pytest.raises(ValueError):
        trainsim.run(TINY, set={"cluster.nic_gbps": float("nan")})


# --- the GIL and Ctrl-C ---


def test_simulations_run_in_parallel_threads():
    """The GIL is released while simulating: two runs on two threads give the results of one each. The runs are of
    the 1,024-GPU example, long enough (a quarter of a second) that the main thread sees them running; the tiny
    example could finish before the main thread looked."""
    results = [None, None]
    example = os.path.join(ROOT, "examples", "gpt3-175b-1024-h100.yaml")

    def work(i):
        results[i] = trainsim.run(example, set={"cluster.nic_gbps": 100 * (i + 1)})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    ticks = 0
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks += 1  # the main thread runs Python meanwhile
        time.sleep(0.001)
    for t in threads:
        t.join()
    assert ticks > 0
    for i in range(2):
        alone = trainsim.run(example, set={"cluster.nic_gbps": 100 * (i + 1)})
        assert without_wall_time(results[i]) == without_wall_time(alone)


def test_ctrl_c_stops_a_long_run():
    scenario = os.path.join(ROOT, "examples", "gpt3-13b-128-a100.yaml")
    longer = {"training.global_batch_size": 2048}  # about 3 s on a CI-class core, most of it in the engine
    started = time.monotonic()
    trainsim.run(scenario, set=longer, per_rank=True)
    whole = time.monotonic() - started
    if whole < 1.0:
        pytest.skip(f"the run takes {whole:.2f} s here: too short to interrupt reliably")
    timer = threading.Timer(whole / 4, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        trainsim.run(scenario, set=longer, per_rank=True)
    stopped = time.monotonic() - started
    timer.join()
    assert stopped < whole * 0.75, f"interrupted after {stopped:.2f} s of a {whole:.2f} s run"
