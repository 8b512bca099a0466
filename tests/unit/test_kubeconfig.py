"""Where the connection settings come from, in kubectl's order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.kubeconfig import NoConfiguration, load_connection


def write_kubeconfig(path: Path, server: str, *, contexts: tuple[str, ...] = ("main",)) -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": c, "cluster": {"server": f"{server}/{c}"}} for c in contexts],
        "users": [{"name": c, "user": {"token": f"token-{c}"}} for c in contexts],
        "contexts": [{"name": c, "context": {"cluster": c, "user": c}} for c in contexts],
        "current-context": contexts[0],
    }
    path.write_text(json.dumps(config))
    return str(path)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path


def test_flag_wins_over_environment_and_home(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = write_kubeconfig(clean_env / "flag", "https://flag")
    monkeypatch.setenv("KUBECONFIG", write_kubeconfig(clean_env / "env", "https://env"))
    (clean_env / "home" / ".kube").mkdir()
    write_kubeconfig(clean_env / "home" / ".kube" / "config", "https://home")
    connection = load_connection(flag)
    assert connection.configuration.host == "https://flag/main"
    assert connection.source == flag


def test_environment_then_home(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / "home" / ".kube").mkdir()
    write_kubeconfig(clean_env / "home" / ".kube" / "config", "https://home")
    assert load_connection().configuration.host == "https://home/main"
    monkeypatch.setenv("KUBECONFIG", write_kubeconfig(clean_env / "env", "https://env"))
    connection = load_connection()
    assert connection.configuration.host == "https://env/main"
    assert connection.configuration.api_key["BearerToken"] == "Bearer token-main"


def test_kubeconfig_list_in_the_environment_is_merged(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_kubeconfig(clean_env / "a", "https://a", contexts=("one",))
    second = write_kubeconfig(clean_env / "b", "https://b", contexts=("two",))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    assert load_connection(context="two").configuration.host == "https://b/two"


def test_context_selects_cluster_and_user(clean_env: Path) -> None:
    path = write_kubeconfig(clean_env / "k", "https://s", contexts=("one", "two"))
    connection = load_connection(path, context="two")
    assert connection.configuration.host == "https://s/two"
    assert connection.configuration.api_key["BearerToken"] == "Bearer token-two"


def test_unknown_context_names_it(clean_env: Path) -> None:
    path = write_kubeconfig(clean_env / "k", "https://s")
    with pytest.raises(NoConfiguration, match="nope"):
        load_connection(path, context="nope")


def test_missing_file_names_it(clean_env: Path) -> None:
    with pytest.raises(NoConfiguration, match="does-not-exist"):
        load_connection(str(clean_env / "does-not-exist"))


def test_nothing_configured_says_what_to_do(clean_env: Path) -> None:
    with pytest.raises(NoConfiguration, match="--kubeconfig"):
        load_connection(service_account_dir=clean_env / "no-sa")


def test_in_cluster_service_account(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sa = clean_env / "sa"
    sa.mkdir()
    (sa / "token").write_text("pod-token")
    (sa / "ca.crt").write_text("not a real CA, only read as a path")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    connection = load_connection(service_account_dir=sa)
    assert connection.source == "in-cluster"
    assert connection.configuration.host == "https://10.0.0.1:443"
    assert connection.configuration.api_key["BearerToken"].lower() == "bearer pod-token"
    assert connection.configuration.ssl_ca_cert == str(sa / "ca.crt")


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"HTTPS_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
        ({"https_proxy": "http://lower:3128", "HTTP_PROXY": "http://plain:3128"}, None),
        ({}, None),
    ],
)
def test_the_environments_proxy_is_read_once_not_before_every_request(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], expected: Any
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    if "https_proxy" in variables:
        expected = variables["https_proxy"]
    configuration = load_connection(write_kubeconfig(clean_env / "k", "https://api")).configuration
    assert configuration.proxy == expected
    # A token's refresh sets the host again before each request: that must not read the
    # environment again (it did, a third of a millisecond a request), nor lose the proxy.
    monkeypatch.setenv("HTTPS_PROXY", "http://changed-later:1")
    monkeypatch.setenv("https_proxy", "http://changed-later:1")
    refresh = configuration.refresh_api_key_hook
    if refresh is not None:  # a static token needs none
        refresh(configuration)
    configuration.host = configuration.host
    assert configuration.proxy == expected
    assert configuration.api_key["BearerToken"] == "Bearer token-main"


def test_in_cluster_token_is_read_again_once_rotated(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reconcile.cluster import in_cluster

    sa = clean_env / "sa"
    sa.mkdir()
    (sa / "token").write_text("first\n")
    (sa / "ca.crt").write_text("read as a path only")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    configuration = load_connection(service_account_dir=sa).configuration
    assert configuration.host == "https://[fd00::1]:6443"
    (sa / "token").write_text("rotated")
    # within a minute the token read is kept (a read per request would cost a file open)
    assert configuration.auth_settings()["BearerToken"]["value"] == "Bearer first"
    monkeypatch.setattr(in_cluster, "TOKEN_REREAD_SECONDS", 0.0)
    assert configuration.auth_settings()["BearerToken"]["value"] == "Bearer rotated"


def test_relative_paths_of_a_linked_kubeconfig_start_beside_the_link(clean_env: Path) -> None:
    shared, home = clean_env / "shared", clean_env / "home" / ".kube"
    shared.mkdir()
    home.mkdir()
    (shared / "tok").write_text("beside-the-target")
    (home / "tok").write_text("beside-the-link")
    document = {
        "clusters": [{"name": "c", "cluster": {"server": "https://s"}}],
        "users": [{"name": "u", "user": {"tokenFile": "tok"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    (shared / "config").write_text(json.dumps(document))
    (home / "config").symlink_to(shared / "config")
    configuration = load_connection().configuration
    assert configuration.api_key["BearerToken"] == "Bearer beside-the-link"  # as kubectl


def test_a_bad_proxy_url_is_an_error_naming_it_without_its_password(clean_env: Path) -> None:
    from reconcile.secret_values import scrub

    document = json.loads(Path(write_kubeconfig(clean_env / "k", "https://api")).read_text())
    for proxy in ("http://pu:KubeProxyPw@127.0.0.1:99999", "socks5://pu:KubeProxyPw@h:1"):
        document["clusters"][0]["cluster"]["proxy-url"] = proxy
        (clean_env / "k").write_text(json.dumps(document))
        with pytest.raises(NoConfiguration, match="proxy-url") as raised:
            load_connection(str(clean_env / "k"))
        assert "KubeProxyPw" not in str(raised.value)
    assert "KubeProxyPw" not in scrub("refused: http://pu:KubeProxyPw@127.0.0.1:99999")


def test_a_kubeconfig_token_is_scrubbed_from_what_the_run_says(clean_env: Path) -> None:
    from reconcile.secret_values import scrub

    load_connection(write_kubeconfig(clean_env / "k", "https://api"))
    assert "token-main" not in scrub("Invalid header value b'Bearer token-main\\n'")
