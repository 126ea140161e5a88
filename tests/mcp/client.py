"""A real MCP client for `pier mcp`'s tests (tests/mcp_linux.rs, tests/mcp_agent_linux.rs): the
official Python SDK's stdio client (`mcp.client.stdio.stdio_client`, under the SDK's `Client`,
whose `ClientSession` does the handshake and fulfils `InputRequiredResult`s), driven by a
script — and, as an agent does, the parent of what it starts.

    client.py SCRIPT -- COMMAND [ARG...]

SCRIPT is a JSON object:
    {"mode": "auto" | "legacy" | "2026-07-28",   # the SDK's own negotiation (default "auto"),
                                                  # "legacy": the initialize handshake
     "name": "test-agent",                        # clientInfo.name (default: the SDK's)
     "elicit": null | "accept" | "accept-false" | "decline" | "cancel",
                                                  # null: the client cannot elicit
     "steps": [{"list": true}, {"call": "cards", "args": {...}}, ...]}
Without "steps", the steps are read from stdin, one JSON object a line, and each step's line
is printed as soon as it is done (so a test can change the world between two calls); the
client closes the session at the end of stdin. An argument written "$plan" is the plan id the
last `plan_stop` step returned.

Two more steps start a process as an agent does, this process its parent:
    {"spawn": [ARGV...], "cwd": DIR, "env": {NAME: VALUE}}
        argv started directly (no shell), stdin/stdout/stderr /dev/null, in this session,
        with this process's environment and "env" added; answers {"pid"}.
    {"spawn_pty": "LINE", "cwd": DIR}
        a person's terminal: an interactive bash (`bash --norc --noprofile -i`) on a new pty,
        in DIR, LINE typed into it; answers {"pid"} of the bash. What it prints is read and
        dropped; the pty stays open while this process runs.

Prints one JSON object per line: first {"protocol": the negotiated version}, then one per
step — {"tools": [{"name", "annotations"}]} for a list, {"is_error", "text", "structured",
"asked": [the questions the person was asked during this call]} for a call, or
{"error": {"code", "message"}} when the server answered a protocol error. The server's
environment is this process's (PIER_STATE_DIR and the rest).
"""

import json
import os
import pty
import subprocess
import sys
import threading

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError


def main() -> None:
    script = json.loads(sys.argv[1])
    if sys.argv[2] != "--":
        sys.exit("usage: client.py SCRIPT -- COMMAND [ARG...]")
    command = sys.argv[3:]
    anyio.run(run, script, command)


async def run(script: dict, command: list[str]) -> None:
    asked: list[str] = []
    answer = script.get("elicit")

    async def elicit(_context, params):
        asked.append(params.message)
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        if answer == "accept-false":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(action=answer)

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    kwargs = {"mode": script.get("mode", "auto")}
    if answer is not None:
        kwargs["elicitation_callback"] = elicit
    if "name" in script:
        kwargs["client_info"] = types.Implementation(name=script["name"], version="0.0.1")
    async with Client(stdio_client(params), **kwargs) as client:
        say({"protocol": client.protocol_version})
        plan = None
        async for step in steps(script):
            asked.clear()
            args = {k: plan if v == "$plan" else v for k, v in step.get("args", {}).items()}
            done = await one(client, {**step, "args": args}, asked)
            plan = (done.get("structured") or {}).get("plan", plan)
            say(done)


async def steps(script: dict):
    """The script's steps, or one a line from stdin until its end."""
    if "steps" in script:
        for step in script["steps"]:
            yield step
        return
    while line := await anyio.to_thread.run_sync(sys.stdin.readline):
        if line.strip():
            yield json.loads(line)


# What this process started, kept so it is neither reaped nor closed early.
STARTED: list = []


async def one(client: Client, step: dict, asked: list[str]) -> dict:
    if "spawn" in step:
        return {"pid": spawn(step["spawn"], step["cwd"], step.get("env", {}))}
    if "spawn_pty" in step:
        return {"pid": spawn_pty(step["spawn_pty"], step["cwd"])}
    try:
        if step.get("list"):
            listed = await client.list_tools()
            return {
                "tools": [
                    {
                        "name": t.name,
                        "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                        if t.annotations
                        else None,
                    }
                    for t in listed.tools
                ]
            }
        result = await client.call_tool(step["call"], step.get("args", {}))
    except MCPError as e:
        return {"error": {"code": e.error.code, "message": e.error.message}}
    text = "\n".join(c.text for c in result.content if c.type == "text")
    return {
        "is_error": bool(result.is_error),
        "text": text,
        "structured": result.structured_content,
        "asked": list(asked),
    }


def spawn(argv: list[str], cwd: str, env: dict) -> int:
    child = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=False,
    )
    STARTED.append(child)
    return child.pid


def spawn_pty(line: str, cwd: str) -> int:
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
        finally:
            os._exit(127)
    os.write(fd, (line + "\n").encode())
    threading.Thread(target=drain, args=(fd,), daemon=True).start()
    STARTED.append(fd)
    return pid


def drain(fd: int) -> None:
    """Reads what the terminal shows, so the shell never blocks on a full pty."""
    while True:
        try:
            if not os.read(fd, 4096):
                return
        except OSError:
            return


def say(doc: dict) -> None:
    print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
