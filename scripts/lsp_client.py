"""A minimal Language Server Protocol client for the benchmark: start a server on stdio, open a
document, change it, wait for its diagnostics, and read the server's CPU time from the kernel
(Linux's /proc, every thread of it counted) between two moments.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

_TICKS = os.sysconf("SC_CLK_TCK")


class LanguageClient:
    def __init__(self, command: Sequence[str], root: Path, env: Optional[Dict[str, str]] = None) -> None:
        self.process = subprocess.Popen(list(command), cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                    "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                                    "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}},
                                                     "general": {"positionEncodings": ["utf-16"]}}})
        self.notify("initialized", {})

    def cpu(self) -> float:
        """The server's CPU seconds so far, user and system, all its threads."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS

    def open(self, uri: str, text: str, version: int = 1) -> List[Any]:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                              "version": version, "text": text}})
        return self.diagnostics(uri, version)

    def insert(self, uri: str, version: int, line: int, character: int, text: str) -> List[Any]:
        """Insert `text` at (line, character) as version `version` (an incremental change, as an
        editor sends a keystroke); the diagnostics published for it."""
        where = {"line": line, "character": character}
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"range": {"start": where, "end": where},
                                                                   "text": text}]})
        return self.diagnostics(uri, version)

    def diagnostics(self, uri: str, version: int) -> List[Any]:
        """Wait for diagnostics of `uri` at `version` (or of no version, from a server that
        does not say), answering the server's own requests meanwhile."""
        while True:
            message = self._receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                if params["uri"] == uri and params.get("version") in (None, version):
                    return params["diagnostics"]
            elif "method" in message and "id" in message:  # a request of the server's: configuration, progress
                asked = message.get("params", {}).get("items")
                self._send({"jsonrpc": "2.0", "id": message["id"],
                            "result": [None] * len(asked) if isinstance(asked, list) else None})

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self._receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _receive(self) -> Dict[str, Any]:
        assert self.process.stdout is not None
        length: Optional[int] = None
        while True:
            header = self.process.stdout.readline()
            if not header:
                raise EOFError("the server closed its output")
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(self.process.stdout.read(length))
