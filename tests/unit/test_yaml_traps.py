"""YAML 1.1 traps, read as kubectl reads them (go-yaml v2 through sigs.k8s.io/yaml), by the one
reader that controllers, `--local` manifests and `--output-dir` reloads share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.memory import MemoryCluster
from reconcile.files.dump import to_yaml
from reconcile.files.seed import ManifestError, load_manifests
from reconcile.objects.yamltext import YamlError, load_documents
from reconcile.runner.sources import yaml_documents


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # booleans: YAML 1.1's words, `y` and `n` included (go-yaml v2; PyYAML reads them as str)
        ("yes", True),
        ("Yes", True),
        ("on", True),
        ("ON", True),
        ("y", True),
        ("Y", True),
        ("True", True),
        ("no", False),
        ("off", False),
        ("n", False),
        ("FALSE", False),
        ('"yes"', "yes"),
        ("'on'", "on"),
        ("!!str y", "y"),
        # dates and times stay the strings written
        ("2024-01-01", "2024-01-01"),
        ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
        # numbers
        ("1:20", "1:20"),  # YAML 1.1 base 60: a string to kubectl, 80 to PyYAML
        ("0755", 493),
        ("0o755", 493),
        ("0x1F", 31),
        ("0b101", 5),
        ("-0b11", -3),
        ("1_000", 1000),
        ("0759", 759),  # not octal: go-yaml reads a float, which goes out as 759
        ("08", 8),
        ("1e3", 1000),  # a whole float64: Go's JSON writes it as an integer
        ("3.0", 3),
        ("1.5", 1.5),
        (".5", 0.5),
        ("+1", 1),
        ("0", 0),
        ("9223372036854775807", 2**63 - 1),
        ("18446744073709551615", 2**64 - 1),
        ("123456789012345678901234567890", 1.2345678901234568e29),  # beyond 64 bits
        ('"0755"', "0755"),
        # not numbers
        ("1.2.3", "1.2.3"),
        ("10.0.0.1", "10.0.0.1"),
        ("=", "="),
        ("~", None),
        ("null", None),
        ("", None),
    ],
)
def test_a_scalar_reads_as_kubectl_reads_it(written: str, read: Any) -> None:
    (document,) = load_documents(f"value: {written}\n", "trap.yaml")
    value = document["value"]
    assert value == read and type(value) is type(read)


def test_keys_are_strings_as_in_json() -> None:
    (document,) = load_documents("y: 1\nno: 2\n3: three\n", "keys.yaml")
    assert document == {"true": 1, "false": 2, "3": "three"}


@pytest.mark.parametrize("written", [".inf", "-.Inf", ".nan"])
def test_numbers_json_cannot_carry_are_refused_with_the_place(written: str) -> None:
    with pytest.raises(YamlError, match=r"not a number JSON can carry.*line 2, column 8"):
        load_documents(f"kind: X\nvalue: {written}\n", "trap.yaml")


TRAPS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: traps
  namespace: default
data:
  RELEASE: 2024-01-01
  MODE: "0755"
  WINDOW: 1:20
  RELEASED: "yes"
"""


def test_both_readers_read_the_traps_alike(tmp_path: Path) -> None:
    (tmp_path / "traps.yaml").write_text(TRAPS)
    (loaded,) = load_manifests(MemoryCluster(), tmp_path)
    ((_, _, read),) = yaml_documents(tmp_path)
    expected = {"RELEASE": "2024-01-01", "MODE": "0755", "WINDOW": "1:20", "RELEASED": "yes"}
    assert loaded["data"] == read["data"] == expected


def test_an_unquoted_yes_in_configmap_data_is_refused_as_the_server_refuses_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "flags.yaml").write_text(TRAPS.replace('"yes"', "yes"))
    with pytest.raises(ManifestError) as error:
        load_manifests(MemoryCluster(), tmp_path)
    (failure,) = error.value.failures
    assert failure.startswith("flags.yaml (document 1): ConfigMap default/traps: BadRequest (400)")
    assert (
        "json: cannot unmarshal bool into Go struct field ConfigMap.data[RELEASED] of type string"
    ) in failure


def test_the_dump_quotes_what_would_read_back_as_something_else() -> None:
    data = {k: k for k in ("y", "n", "on", "0o755", "0759", "1e3", "+1", "1_000", "1.5")}
    data |= {"plain": "10.0.0.1", "word": "yes-no"}
    written = to_yaml({"data": data})
    assert "\nn:" not in written and "  'n': 'n'" in written
    assert "plain: 10.0.0.1" in written  # what reads back as itself stays unquoted
    (read,) = load_documents(written, "dump.yaml")
    assert read == {"data": data}
