"""availability's header counts its GPUs, instances and trials with compute.units.counted
(the one plural rule): one trial is '1 trial', not '1 trials'."""
from netmodel.study.availability import availability


def test_the_header_counts_in_words():
    # h100-dgx's cell is 32 GPUs; Llama-3.1-405B at TP 8 is 32 / 8 = 4 instances
    for trials, said in ((1, "1 trial x"), (2, "2 trials x")):
        a = availability("h100-dgx", "Llama-3.1-405B", "decode", trials=trials,
                         horizon="1d", parallelism="tp")
        head = a.table().splitlines()[0]
        assert ": 32 GPUs, TP 8, 4 instances; spares 0 " in head, head
        assert f"; {said} 1 d, seed 0" in head, head
