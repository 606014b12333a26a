"""Finding Zephyr, west and a toolchain, with made-up trees (no Zephyr needed)."""

from __future__ import annotations

import sys

import pytest

from mtk.errors import ToolMissing
from mtk.zephyr_env import find_base, find_toolchain, find_zephyr, read_version
from harness import executable, zephyr_tree


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("ZEPHYR_BASE", "ZEPHYR_TOOLCHAIN_VARIANT", "ZEPHYR_SDK_INSTALL_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return monkeypatch


def test_zephyr_base_wins(clean_env, tmp_path):
    base = zephyr_tree(tmp_path / "zp" / "zephyr")
    clean_env.setenv("ZEPHYR_BASE", str(base))
    assert find_base(tmp_path) == base.resolve()
    assert read_version(base) == ((4, 2, 0), "4.2.0-rc1")


def test_a_west_workspace_above_the_folder(clean_env, tmp_path):
    base = zephyr_tree(tmp_path / "ws" / "zephyr")
    (tmp_path / "ws" / ".west").mkdir()
    (tmp_path / "ws" / ".west" / "config").write_text("[manifest]\npath = zephyr\nfile = west.yml\n")
    app = tmp_path / "ws" / "apps" / "kws"
    app.mkdir(parents=True)
    assert find_base(app) == base.resolve()
    clean_env.chdir(app)
    assert find_base(tmp_path / "elsewhere") == base.resolve()


def test_no_zephyr_says_how_to_get_one(clean_env, tmp_path):
    with pytest.raises(ToolMissing, match="no Zephyr found") as err:
        find_base(tmp_path)
    assert "west init" in str(err.value) and err.value.exit_code == 3


def test_a_base_that_is_not_zephyr(clean_env, tmp_path):
    clean_env.setenv("ZEPHYR_BASE", str(tmp_path))
    with pytest.raises(ToolMissing, match="not a Zephyr tree"):
        find_base(tmp_path)


def test_too_old_a_zephyr_is_refused(clean_env, tmp_path):
    clean_env.setenv("ZEPHYR_BASE", str(zephyr_tree(tmp_path / "zephyr", (3, 4, 0), "")))
    with pytest.raises(ToolMissing, match="Zephyr 3.4.0 .* is too old: mtk needs Zephyr 3.7 or newer"):
        find_zephyr(tmp_path)


def test_west_missing(clean_env, tmp_path):
    clean_env.setenv("ZEPHYR_BASE", str(zephyr_tree(tmp_path / "zephyr")))
    with pytest.raises(ToolMissing, match="'west' is not on PATH"):
        find_zephyr(tmp_path)


def test_toolchains_in_order(clean_env, tmp_path):
    base = zephyr_tree(tmp_path / "zephyr")
    with pytest.raises(ToolMissing, match="no Zephyr SDK and no arm-none-eabi-gcc"):
        find_toolchain(base)
    gcc = executable(tmp_path / "gnu" / "bin", "arm-none-eabi-gcc")
    clean_env.setenv("PATH", str(gcc.parent))
    assert find_toolchain(base) == {"ZEPHYR_TOOLCHAIN_VARIANT": "gnuarmemb",
                                    "GNUARMEMB_TOOLCHAIN_PATH": str((tmp_path / "gnu").resolve())}
    sdk = tmp_path / "home" / "zephyr-sdk-0.17.2"
    sdk.mkdir(parents=True)
    (sdk / "sdk_version").write_text("0.17.2\n")
    assert find_toolchain(base) == {"ZEPHYR_TOOLCHAIN_VARIANT": "zephyr", "ZEPHYR_SDK_INSTALL_DIR": str(sdk)}
    clean_env.setenv("ZEPHYR_TOOLCHAIN_VARIANT", "cross-compile")
    assert find_toolchain(base) == {}


def test_everything_found(clean_env, tmp_path):
    base = zephyr_tree(tmp_path / "zephyr")
    clean_env.setenv("ZEPHYR_BASE", str(base))
    west = executable(tmp_path / "bin", "west")
    executable(tmp_path / "bin", "arm-none-eabi-gcc")
    zephyr = find_zephyr(tmp_path)
    assert (zephyr.base, zephyr.version, zephyr.west) == (base.resolve(), (4, 2, 0), str(west))
    assert zephyr.toolchain["ZEPHYR_TOOLCHAIN_VARIANT"] == "gnuarmemb"


@pytest.mark.parametrize("required, refused", [((3, 99, 0), True), ((3, 8, 0), False)])
def test_west_s_python_against_the_tree_s_requirement(clean_env, tmp_path, required, refused):
    base = zephyr_tree(tmp_path / "zephyr")
    (base / "cmake" / "modules").mkdir()
    (base / "cmake" / "modules" / "python.cmake").write_text(
        f"set(PYTHON_MINIMUM_REQUIRED {'.'.join(map(str, required))})\n")
    clean_env.setenv("ZEPHYR_BASE", str(base))
    executable(tmp_path / "bin", "west", f"#!{sys.executable}")
    executable(tmp_path / "bin", "arm-none-eabi-gcc")
    running = ".".join(map(str, sys.version_info[:3]))
    if refused:
        with pytest.raises(ToolMissing, match=f"runs on Python {running}; Zephyr 4.2.0-rc1 needs Python 3.99.0"):
            find_zephyr(tmp_path)
    else:
        assert find_zephyr(tmp_path).version == (4, 2, 0)

