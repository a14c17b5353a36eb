"""Held settings: switched on by the first caller in any thread, restored by the last."""

from __future__ import annotations

import threading

import dask
import pandas as pd
import pytest

from anoneval.core.data.held import Held, dask_config, pandas_option


def test_overlapping_callers_keep_it_on_until_the_last_ends() -> None:
    log: list[str] = []
    held = Held(lambda: (log.append("on"), lambda: log.append("off"))[1])
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with held():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    entered.wait(10)
    with held():  # the other thread's call is still in: no second switch
        assert log == ["on"]
        leave.set()
        thread.join(10)
        assert log == ["on"]  # it ended, this one runs on
    assert log == ["on", "off"]
    with pytest.raises(ValueError), held():  # an error inside still restores
        raise ValueError
    assert log == ["on", "off", "on", "off"]


def test_dask_config_is_restored_to_what_it_was() -> None:
    held = Held(dask_config({"dataframe.convert-string": False}))
    with dask.config.set({"dataframe.convert-string": True}):
        with held(), held():
            assert dask.config.get("dataframe.convert-string") is False
        assert dask.config.get("dataframe.convert-string") is True


@pytest.mark.skipif(int(pd.__version__.split(".")[0]) >= 3,
                    reason="pandas >= 3 always copies on write: no option to switch")
def test_pandas_option_is_restored_to_what_it_was() -> None:
    held = Held(pandas_option("mode.copy_on_write", True))
    before = pd.get_option("mode.copy_on_write")
    with held():
        assert pd.get_option("mode.copy_on_write") is True
    assert pd.get_option("mode.copy_on_write") == before
