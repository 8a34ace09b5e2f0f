"""CompactColumns: every value reads back as the float32 it was, whatever type holds it; a
metric never reported costs nothing; a value that does not fit moves its metric once."""

from __future__ import annotations

import numpy as np
from gpufleet.core.live.columns import BATCH, CompactColumns

NAN = float("nan")


def _cols(n_metrics: int = 4, n_gpu: int = 2, cap: int = 8) -> CompactColumns:
    return CompactColumns(n_metrics, np.arange(n_metrics), n_gpu, cap)


def _write(c: CompactColumns, slot: int, rows: list[list[float]], gis: list[int]) -> None:
    """``rows``: per metric, the values of the GPUs ``gis`` (the others report nothing)."""
    per_gpu = [[NAN] * len(rows) for _ in range(c.n_gpu)]
    for j, gi in enumerate(gis):
        per_gpu[gi] = [r[j] for r in rows]
    c.write(slot, per_gpu)


def _all(c: CompactColumns, metric: int) -> np.ndarray:
    return c.read(metric, list(range(c.n_gpu)), [slice(0, c.cap)])


def test_each_metric_in_the_narrowest_type_and_values_read_back_as_float32() -> None:
    c = _cols()
    # metric 0: a percentage; 1: a clock in MHz; 2: watts with decimals; 3: never reported
    _write(c, 0, [[92, 91], [1410, 1980], [312.457, 98.1], [NAN, NAN]], [0, 1])
    assert c.kinds() == {0: "uint8", 1: "float16", 2: "float32"}
    assert c.nbytes == 2 * 8 * (1 + 2 + 4)  # nothing for metric 3
    # 2619 does not fit float16 (odd above 2048): the clock moves to float32, history kept.
    _write(c, 1, [[92, 91], [2619, 1980], [312.457, 98.1], [NAN, NAN]], [0, 1])
    assert c.kinds()[1] == "float32"
    assert _all(c, 1)[:, :2].tolist() == [[1410.0, 2619.0], [1980.0, 1980.0]]
    assert _all(c, 2)[:, 0].tolist() == np.array([312.457, 98.1], dtype=np.float32).tolist()
    assert np.isnan(_all(c, 3)).all() and _all(c, 3).shape == (2, 8)
    assert np.isnan(_all(c, 0)[:, 2:]).all()  # slots never written hold no value


def test_a_value_that_does_not_fit_moves_the_metric_once_and_keeps_its_history() -> None:
    c = _cols(n_metrics=1)
    for slot, v in enumerate([3, 7, 250]):
        _write(c, slot, [[v, NAN]], [0, 1])
    assert c.kinds() == {0: "uint8"}
    _write(c, 3, [[255, 0.5]], [0, 1])  # 255 is uint8's "no value"; 0.5 is not an integer
    assert c.kinds() == {0: "float16"}
    _write(c, 4, [[-40, 1e9]], [0, 1])  # too large for float16
    assert c.kinds() == {0: "float32"}
    got = _all(c, 0)
    assert got[0, :5].tolist() == [3, 7, 250, 255, -40]
    assert np.isnan(got[1, :3]).all() and got[1, 3:5].tolist() == [0.5, 1e9]
    assert c.value(0, 1, 0) != c.value(0, 1, 0)  # NaN: GPU 1 reported nothing then
    assert c.value(0, 0, 2) == 250.0


def test_gpus_missing_from_a_sample_and_a_slot_written_again() -> None:
    c = _cols(n_metrics=2, n_gpu=3)
    _write(c, 0, [[10, 20, 30], [1.5, 2.5, 3.5]], [0, 1, 2])
    _write(c, 0, [[11], [4.25]], [2])  # the slot again (the ring wrapped), only GPU 2 sent
    assert np.isnan(_all(c, 0)[:2, 0]).all() and _all(c, 0)[2, 0] == 11
    assert _all(c, 1)[2, 0] == 4.25
    _write(c, 1, [[], []], [])  # a sample without rows
    assert np.isnan(_all(c, 0)[:, 1]).all()


def test_writes_kept_for_a_batch_are_stored_before_any_read_and_on_a_full_batch() -> None:
    c = _cols(n_metrics=1, n_gpu=1, cap=100)
    assert c.batch == BATCH
    for slot in range(BATCH - 1):
        _write(c, slot, [[slot]], [0])
    assert c.blocks[0].size == 0  # kept, not stored yet
    _write(c, BATCH - 1, [[300.5]], [0])  # the batch is full: stored (as float16)
    assert c.blocks[1].shape == (1, 1, 100) and c.blocks[0].size == 0
    _write(c, BATCH, [[7]], [0])
    assert c.value(0, 0, BATCH) == 7.0  # a read stores what was kept first
    assert _all(c, 0)[0, : BATCH + 1].tolist() == [*range(BATCH - 1), 300.5, 7]
    small = _cols(n_metrics=1, n_gpu=1, cap=10)
    assert small.batch == 5  # never a slot twice in one batch


def test_reads_join_the_slots_in_the_order_asked_and_pick_gpus() -> None:
    c = _cols(n_metrics=1, n_gpu=2, cap=4)
    for slot in range(4):
        _write(c, slot, [[slot, 100 + slot]], [0, 1])
    got = c.read(0, [1], [slice(2, 4), slice(0, 1)])
    assert got.tolist() == [[102, 103, 100]]
    assert c.read(0, [1, 0], [slice(0, 2)]).tolist() == [[100, 101], [0, 1]]
    assert c.read(0, [0], [slice(1, 1), slice(0, 0)]).shape == (1, 0)
