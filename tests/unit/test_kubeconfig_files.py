"""kubectl's rules for kubeconfig files, on parsed documents (no files, no client)."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.kubeconfig_files import (
    KubeconfigError,
    merge,
    needs_client,
    settings,
    single_document,
)


def config(name: str, server: str, user: dict[str, Any], current: str | None = None) -> Any:
    document: dict[str, Any] = {
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    if current:
        document["current-context"] = current
    return document


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_the_first_file_to_name_an_entry_or_set_current_context_wins() -> None:
    first = config("a", "https://first/", {"token": "one"}, current="a")
    second = config("a", "https://second", {"token": "two"}, current="b")
    second["contexts"].append({"name": "b", "context": {"cluster": "a", "user": "a"}})
    merged = merge([(Path("/one"), first), (Path("/two"), second)])
    assert merged.current_context == "a"
    found = settings(merged, None)
    assert (found.server, found.token) == ("https://first", "one")
    assert settings(merged, "b").server == "https://first"


def test_relative_paths_start_at_the_file_that_holds_them() -> None:
    clusters = {
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "https://s", **{"certificate-authority": "certs/ca.crt"}},
            }
        ],
        "current-context": "x",
    }
    users = {
        "users": [
            {"name": "u", "user": {"client-certificate": "u.crt", "client-key": "/abs/u.key"}}
        ],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    }
    found = settings(merge([(Path("/etc/k"), clusters), (Path("/home/me"), users)]), None)
    assert found.ca_file == "/etc/k/certs/ca.crt"
    assert found.client_cert_file == "/home/me/u.crt"
    assert found.client_key_file == "/abs/u.key"


def test_inline_data_wins_over_a_path_and_is_decoded() -> None:
    document = config(
        "c", "https://s", {"client-certificate": "x", "client-certificate-data": b64("CERT")}
    )
    document["clusters"][0]["cluster"]["certificate-authority-data"] = b64("CA PEM")
    found = settings(merge([(Path("/d"), document)]), "c")
    assert (found.ca_data, found.client_cert_data, found.client_cert_file) == (
        "CA PEM",
        b"CERT",
        None,
    )


def test_plain_http_reads_no_tls_settings() -> None:
    document = config("c", "http://s", {"token": "t"})
    document["clusters"][0]["cluster"]["certificate-authority"] = "ca.crt"
    assert settings(merge([(Path("/d"), document)]), "c").ca_file is None


def test_token_file_is_read_and_trimmed_and_a_token_wins(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    with_file = config("c", "https://s", {"tokenFile": "token"})
    assert settings(merge([(tmp_path, with_file)]), "c").token == "from-file"
    both = config("c", "https://s", {"tokenFile": "token", "token": "inline"})
    assert settings(merge([(tmp_path, both)]), "c").token == "inline"


def test_basic_auth_when_no_token() -> None:
    document = config("c", "https://s", {"username": "me", "password": "secret"})
    assert settings(merge([(Path("/d"), document)]), "c").basic_auth == ("me", "secret")


@pytest.mark.parametrize(
    ("document", "context", "message"),
    [
        (config("c", "https://s", {}), "nope", "context 'nope' is not defined (contexts: c)"),
        (config("c", "https://s", {}), None, "no context: set current-context or pass --context"),
        (config("c", "", {}), "c", "cluster of context 'c' has no server"),
        ({"clusters": [{"cluster": {}}]}, None, "clusters[0].name is missing"),
        (["not", "a", "mapping"], None, "is not a mapping"),
        (
            {"contexts": [{"name": "x", "context": {"cluster": "gone"}}]},
            "x",
            "context 'x' names cluster 'gone', not defined",
        ),
    ],
)
def test_what_is_missing_is_named(document: Any, context: str | None, message: str) -> None:
    with pytest.raises(KubeconfigError, match=re.escape(message)):
        settings(merge([(Path("/d"), document)]), context)


def test_bad_base64_names_the_field() -> None:
    document = config("c", "https://s", {"client-key-data": "%%%"})
    with pytest.raises(KubeconfigError, match="client-key-data is not base64"):
        settings(merge([(Path("/d"), document)]), "c")


def test_plugin_users_go_to_the_client_as_one_document_with_absolute_paths() -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "plugin"}}
    document = config("c", "https://s", user, current="c")
    document["clusters"][0]["cluster"]["certificate-authority"] = "ca.crt"
    other = config("other", "https://o", {"token": "t"})
    merged = merge([(Path("/d"), document), (Path("/e"), other)])
    assert needs_client(merged, None) and not needs_client(merged, "other")
    single = single_document(merged, None)
    assert single["current-context"] == "c"
    assert [c["name"] for c in single["clusters"]] == ["c"]
    assert single["clusters"][0]["cluster"]["certificate-authority"] == "/d/ca.crt"
    assert single["users"][0]["user"] == user


def test_an_exec_command_named_by_a_path_runs_from_beside_the_kubeconfig() -> None:
    relative = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "./helper"}}
    bare = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "helper"}}
    for user, expected in ((relative, "/cfg/helper"), (bare, "helper")):
        merged = merge([(Path("/cfg"), config("c", "https://s", user, current="c"))])
        assert single_document(merged, None)["users"][0]["user"]["exec"]["command"] == expected


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        (
            {"insecure-skip-tls-verify": "false"},
            "cluster 'c': insecure-skip-tls-verify must be true or false, not 'false'",
        ),
        (
            {"insecure-skip-tls-verify": True, "certificate-authority-data": b64("pem")},
            "cluster 'c': insecure-skip-tls-verify is not allowed with a certificate-authority",
        ),
    ],
)
@pytest.mark.parametrize("user", [{"token": "t"}, {"exec": {"command": "plugin"}}])
def test_insecure_is_a_boolean_never_beside_an_authority_for_every_user(
    cluster: dict[str, Any], message: str, user: dict[str, Any]
) -> None:
    document = config("c", "https://s", user, current="c")
    document["clusters"][0]["cluster"].update(cluster)
    merged = merge([(Path("/d"), document)])
    with pytest.raises(KubeconfigError, match=re.escape(message)):
        settings(merged, None) if "token" in user else single_document(merged, None)
