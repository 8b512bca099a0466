"""A webhook server that answers a byte at a time: each byte arrives well within any per-read
timeout, so only a deadline on the whole call stops it. `where` says which part trickles: the
status line, the headers, or the body (after complete headers)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

ANSWER = json.dumps({"status": {"ok": True}, "children": []}).encode()


def _response(where: str) -> tuple[bytes, bytes]:
    """(sent at once, sent a byte at a time)."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(ANSWER)}\r\n".encode()
        + b"X-Padding: "
        + b"p" * 200
        + b"\r\n\r\n"
    )
    if where == "status":
        return b"", head + ANSWER
    if where == "headers":
        return head[:20], head[20:] + ANSWER
    return head, ANSWER


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _serve(conn: socket.socket, where: str, interval: float, stop: threading.Event) -> None:
    with conn:
        try:
            _read_request(conn)
            now, slowly = _response(where)
            conn.sendall(now)
            for byte in slowly:
                if stop.wait(interval):
                    return
                conn.sendall(bytes([byte]))
        except OSError:
            return  # the client cut the call: what the tests expect


@contextlib.contextmanager
def trickling_server(
    where: str = "body", interval: float = 0.5, connected: threading.Event | None = None
) -> Iterator[str]:
    """The URL of a server trickling `where` ("status", "headers" or "body"); `connected` is
    set when a client connects."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            if connected is not None:
                connected.set()
            threading.Thread(target=_serve, args=(conn, where, interval, stop), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/sync"
    finally:
        stop.set()
        thread.join(5)
        listener.close()
        time.sleep(0)
