"""A real editor for a language server, as tests/agent_residue_linux.rs needs one: it starts the
server over stdio (argv directly, no shell, in this process's session, as an editor's
child_process.spawn does), sends LSP `initialize` and `initialized`, opens one file, and prints
one JSON line {"server": PID, "name": serverInfo.name} once the server has answered. Then it
waits for the end of its own stdin and shuts the server down politely (`shutdown`, `exit`).

    editor.py [--no-process-id] ROOT FILE LANGUAGE -- COMMAND [ARG...]

`initialize` names this process as the server's parent (`processId`), which the servers watch:
they exit when it dies. With --no-process-id it sends null, as an editor that runs the server
elsewhere does; the server then knows its editor only by its pipe.
"""

import json
import os
import subprocess
import sys


def send(w, doc: dict) -> None:
    body = json.dumps(doc).encode()
    w.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    w.flush()


def receive(r) -> dict:
    length = 0
    while (line := r.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if not length:
        sys.exit("editor.py: the language server closed its output")
    return json.loads(r.read(length))


def answer(r, w, request_id: int) -> dict:
    """The response to request_id; requests from the server on the way are answered with null."""
    while True:
        doc = receive(r)
        if doc.get("id") == request_id and "method" not in doc:
            return doc
        if "method" in doc and "id" in doc:
            send(w, {"jsonrpc": "2.0", "id": doc["id"], "result": None})


def main() -> None:
    args = sys.argv[1:]
    process_id = os.getpid()
    if args[0] == "--no-process-id":
        process_id, args = None, args[1:]
    root, file, language = args[:3]
    if args[3] != "--":
        sys.exit("usage: editor.py [--no-process-id] ROOT FILE LANGUAGE -- COMMAND [ARG...]")
    server = subprocess.Popen(args[4:], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    r, w = server.stdout, server.stdin
    uri = "file://" + os.path.abspath(root)
    send(w, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": process_id, "rootUri": uri, "capabilities": {},
        "workspaceFolders": [{"uri": uri, "name": "project"}]}})
    init = answer(r, w, 1)
    send(w, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    path = os.path.abspath(os.path.join(root, file))
    with open(path) as f:
        text = f.read()
    send(w, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file://" + path, "languageId": language, "version": 1, "text": text}}})
    info = init.get("result", {}).get("serverInfo", {})
    print(json.dumps({"server": server.pid, "name": info.get("name")}), flush=True)
    sys.stdin.read()
    send(w, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    answer(r, w, 2)
    send(w, {"jsonrpc": "2.0", "method": "exit"})
    server.wait()


if __name__ == "__main__":
    main()
