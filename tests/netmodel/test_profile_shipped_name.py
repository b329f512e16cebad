"""A profile file that calls itself by a shipped profile's name (case aside) with other
values is refused, as a GPU file's GPU of a catalog GPU's name is: its figures were reported
under the shipped name ('engine profile vllm-dgx-h100' for a file of GEMM efficiency 0.5),
and a reader could not tell the two apart. A copy identical to the shipped file (its own
path too) is the shipped profile and is taken. calibrate refuses to write one."""

import pytest

from compute.errors import UserError
from compute.profiles import get_profile, read_profile
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

SHIPPED = ROOT / "compute/data/profiles/vllm-dgx-h100.toml"
GEMM = "value = 0.8009100101112235"   # the shipped gemm_efficiency
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "4"]
COMMANDS = {
    "infer": INFER,
    "search": ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "4"],
    "compare": ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B",
                "--max-batch", "8", "-q"],
    "sweep": ["sweep", "--scenario", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
              "-q", "--no-plot", "--param", "adjust.hop_latency=1us,2us"],
    "serve": ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"],
    "study": ["study", "lite-gpu", "--out", "TMP/study"],
}


def _file(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _other_values(tmp_path):
    """The shipped vllm-dgx-h100 with a GEMM efficiency of 0.5, under its name."""
    text = SHIPPED.read_text()
    assert text.count(GEMM) == 1 and 'name = "vllm-dgx-h100"' in text
    return _file(tmp_path, text.replace(GEMM, "value = 0.5"))


def _refusal(path, shipped="'vllm-dgx-h100'", named="'vllm-dgx-h100'"):
    return (f"{path}: [profile] name {named} already names the shipped profile {shipped}, "
            f"whose values differ from this file's; give yours another name (its figures "
            f"would be reported as the shipped profile's)")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_refuses_a_profile_file_of_a_shipped_name(command, tmp_path):
    # was: infer ran it as 'engine profile vllm-dgx-h100' with the file's 0.5
    path = _other_values(tmp_path)
    args = [a.replace("TMP", str(tmp_path)) for a in COMMANDS[command]]
    line = one_line_error(run_cli([*args, "--profile", path]))
    assert line == "error: " + _refusal(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]   # nothing written


def test_calibrate_refuses_it_as_its_base(tmp_path):
    path = _other_values(tmp_path)
    csv = _file(tmp_path, "model,gpu,tp,batch,phase,context,latency_s\n"
                          "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298\n", "m.csv")
    line = one_line_error(run_cli(["calibrate", "--measurements", csv, "-o",
                                   tmp_path / "out.toml", "--base", path]))
    assert line == "error: " + _refusal(path)
    assert not (tmp_path / "out.toml").exists()


def test_a_copy_identical_to_the_shipped_one_is_the_shipped_one(tmp_path):
    copy = _file(tmp_path, SHIPPED.read_text())
    assert read_profile(copy) == get_profile("vllm-dgx-h100") == get_profile(SHIPPED)
    by_name = run_cli([*INFER, "--profile", "vllm-dgx-h100"])
    by_file = run_cli([*INFER, "--profile", copy])
    assert by_name.exit_code == by_file.exit_code == 0, by_file.output
    assert by_file.output == by_name.output
    assert "engine profile vllm-dgx-h100" in by_file.output


def test_the_name_in_other_case_is_the_shipped_ones(tmp_path):
    upper = 'name = "VLLM-DGX-H100"'
    same = _file(tmp_path, SHIPPED.read_text().replace('name = "vllm-dgx-h100"', upper, 1))
    line = one_line_error(run_cli([*INFER, "--profile", same]))
    assert line == (f"error: {same}: [profile] name 'VLLM-DGX-H100' already names the shipped "
                    f"profile 'vllm-dgx-h100' (case aside); name it 'vllm-dgx-h100' as "
                    f"shipped, or give it a name of its own")
    other = _file(tmp_path, _other_values(tmp_path).read_text().replace(
        'name = "vllm-dgx-h100"', upper, 1), "q.toml")
    line = one_line_error(run_cli([*INFER, "--profile", other]))
    assert line == "error: " + _refusal(other, "'vllm-dgx-h100' (case aside)",
                                        "'VLLM-DGX-H100'")


def test_a_name_of_its_own_runs_with_its_values(tmp_path):
    text = _other_values(tmp_path).read_text()
    mine = _file(tmp_path, text.replace('name = "vllm-dgx-h100"', 'name = "mine"', 1), "m.toml")
    r = run_cli([*INFER, "--profile", mine])
    assert r.exit_code == 0, r.output
    assert "engine profile mine" in r.output
    assert get_profile(mine).gemm_efficiency == 0.5


def test_the_library_names_the_file_and_its_name_key_not_a_flag(tmp_path):
    path = _other_values(tmp_path)
    for read in (get_profile, read_profile):
        with pytest.raises(UserError) as err:
            read(path)
        assert str(err.value) == _refusal(path)
        assert "--" not in str(err.value)


@pytest.mark.parametrize("args, said", [
    (["--name", "vllm-dgx-h100"], "--name 'vllm-dgx-h100'"),
    (["--name", "Vllm-H100-2024"], "--name 'Vllm-H100-2024'"),
    ([], "the profile's name 'vllm-h100-2024' (--out's file stem, with no --name)"),
])
def test_calibrate_refuses_to_write_a_shipped_name(args, said, tmp_path):
    csv = _file(tmp_path, "model,gpu,tp,batch,phase,context,latency_s\n"
                          "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298\n", "m.csv")
    shipped = "vllm-dgx-h100" if "vllm-dgx-h100" in args else "vllm-h100-2024"
    line = one_line_error(run_cli(["calibrate", "--measurements", csv, "-o",
                                   tmp_path / "vllm-h100-2024.toml", *args]))
    assert line == (f"error: {said} already names the shipped profile {shipped!r}; give "
                    f"yours another name with --name (its figures would be reported as the "
                    f"shipped profile's)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]


def test_calibrate_writes_under_a_name_of_its_own(tmp_path):
    csv = _file(tmp_path, "model,gpu,tp,batch,phase,context,latency_s\n"
                          "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298\n"
                          "Llama-2-70B,H100-SXM,8,32,decode,576,0.0386\n", "m.csv")
    r = run_cli(["calibrate", "--measurements", csv, "-o", tmp_path / "vllm-h100-2024.toml",
                 "--name", "mine", "--fit", "decode_sequence_overhead_s"])
    assert r.exit_code == 0, r.output
    assert read_profile(tmp_path / "vllm-h100-2024.toml").name == "mine"
