"""``cuda_schedule``: the flag ``HAWKEYE_CUDA_SCHEDULE`` names is set on every visible device's
primary context through the driver API (a fake driver here), nothing is called when it is unset,
a bad value fails in the parent, and a host without the driver or a device is left alone."""

from __future__ import annotations

import ctypes

import pytest

from hawkeye_env.judge.parent.launch import isolation
from hawkeye_env.judge.shared import cuda_schedule


class FakeDriver:
    """``libcuda``'s four calls, recorded; ``devices`` visible, ``init_status`` from ``cuInit``."""

    def __init__(self, devices: int = 2, init_status: int = 0, fail: str = ""):
        self.devices, self.init_status, self.fail = devices, init_status, fail
        self.calls: list[tuple] = []

    def cuInit(self, flags):  # noqa: N802 - the driver's names
        self.calls.append(("cuInit", flags))
        return self.init_status

    def cuDeviceGetCount(self, count):  # noqa: N802
        ctypes.cast(count, ctypes.POINTER(ctypes.c_int)).contents.value = self.devices
        return 0

    def cuDeviceGet(self, device, ordinal):  # noqa: N802
        ctypes.cast(device, ctypes.POINTER(ctypes.c_int)).contents.value = 10 + ordinal
        return 0

    def cuDevicePrimaryCtxSetFlags(self, device, flags):  # noqa: N802
        self.calls.append(("setflags", device.value, flags))
        return 201 if self.fail == "setflags" else 0


def test_the_named_schedule_is_set_on_every_visible_device(monkeypatch):
    monkeypatch.setenv(cuda_schedule.ENV, "Blocking")
    driver = FakeDriver(devices=2)
    assert cuda_schedule.apply_from_env(driver) == 2
    assert driver.calls == [("cuInit", 0), ("setflags", 10, 4), ("setflags", 11, 4)]
    assert cuda_schedule.apply("yield", FakeDriver(devices=1)) == 1


def test_unset_calls_nothing_and_a_bad_value_fails_in_the_parent(monkeypatch):
    monkeypatch.delenv(cuda_schedule.ENV, raising=False)
    driver = FakeDriver()
    assert cuda_schedule.apply_from_env(driver) == 0 and driver.calls == []
    monkeypatch.setenv(cuda_schedule.ENV, "sometimes")
    with pytest.raises(ValueError, match="expected one of auto, spin, yield, blocking"):
        isolation.passed_env({})  # before any worker starts
    monkeypatch.setenv(cuda_schedule.ENV, "yield")
    assert isolation.passed_env({})[cuda_schedule.ENV] == "yield"  # it reaches the sandboxed worker


def test_a_host_without_a_device_is_left_alone_and_a_failing_call_is_named(monkeypatch):
    assert cuda_schedule.apply("blocking", FakeDriver(init_status=cuda_schedule.NO_DEVICE)) == 0

    def no_driver():
        raise OSError("libcuda.so.1: cannot open shared object file")

    monkeypatch.setattr(cuda_schedule, "_driver", no_driver)
    assert cuda_schedule.apply("spin") == 0
    with pytest.raises(RuntimeError, match="cuDevicePrimaryCtxSetFlags failed with CUDA error 201"):
        cuda_schedule.apply("spin", FakeDriver(fail="setflags"))
