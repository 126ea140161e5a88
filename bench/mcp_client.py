# The paired rounds of bench/mcp.sh, run as the benchmark's user: R rounds of `pier scan --json
# --sample-ms W` (wall time from its start to its exit, as a parent sees it) against the `cards`
# tool of one warm `pier mcp --sample-ms W` (from writing the tools/call request to reading its
# response). The client is raw JSON-RPC over the server's pipes, one message a line (the MCP
# stdio transport), so no SDK's own overhead is timed. The order alternates each round. Every
# answer must hold the N fixture servers under DIR. Writes {"scan_ms": [...], "cards_ms": [...]}.
#   python3 bench/mcp_client.py PIER W R DIR N OUT
import json
import subprocess
import sys
import time

pier, window, rounds, folder, n, out = sys.argv[1:7]
rounds, n = int(rounds), int(n)
PROTOCOL = "2025-11-25"  # the newest revision with an initialize handshake


class Server:
    """A `pier mcp` child and the next request id."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [pier, "mcp", "--sample-ms", window],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(out + ".mcp.err", "wb"),
        )
        self.next = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method, params):
        """The result of one request; notifications in between are read and dropped."""
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"mcp_client: pier mcp closed its stdout ({self.proc.wait()}); see {out}.mcp.err")
            message = json.loads(line)
            if message.get("id") == self.next and "method" not in message:
                if "error" in message:
                    sys.exit(f"mcp_client: {method}: {message['error']}")
                return message["result"]
            if "id" in message:  # a request of the server's: none is expected for these tools
                sys.exit(f"mcp_client: pier mcp asked {message.get('method')} during {method}")

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def servers_in(scan):
    """The fixture servers a scan document (docs/scan-json.md) holds under DIR."""
    return [r for p in scan["projects"] if p["path"].startswith(folder + "/") for r in p["resources"]]


def checked(what, scan):
    found = len(servers_in(scan))
    if found != n:
        sys.exit(f"mcp_client: {what} found {found} of the {n} servers")


def cards_scan(result):
    """The scan inside a `cards` answer: its structured content, else its text content."""
    if result.get("isError"):
        sys.exit(f"mcp_client: cards failed: {result.get('content')}")
    doc = result.get("structuredContent")
    if doc is None:
        doc = json.loads(result["content"][0]["text"])
    return doc["scan"]


def timed_scan():
    start = time.perf_counter()
    done = subprocess.run([pier, "scan", "--json", "--sample-ms", window], stdout=subprocess.PIPE, check=True)
    ms = 1e3 * (time.perf_counter() - start)
    checked("pier scan", json.loads(done.stdout))
    return ms


def timed_cards(server):
    start = time.perf_counter()
    result = server.call("tools/call", {"name": "cards", "arguments": {}})
    ms = 1e3 * (time.perf_counter() - start)
    checked("the cards tool", cards_scan(result))
    return ms


def warm():
    """A `pier mcp` past its handshake, its tools listed and one cards answer given."""
    server = Server()
    server.call("initialize", {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "pier-bench", "version": "1"},
    })
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = [t["name"] for t in server.call("tools/list", {})["tools"]]
    if "cards" not in tools:
        sys.exit(f"mcp_client: pier mcp lists no cards tool: {tools}")
    timed_cards(server)
    return server


server = warm()
scan_ms, cards_ms = [], []
for r in range(rounds):
    if r % 2 == 0:
        scan_ms.append(timed_scan())
        cards_ms.append(timed_cards(server))
    else:
        cards_ms.append(timed_cards(server))
        scan_ms.append(timed_scan())
server.close()
with open(out, "w") as f:
    json.dump({"window_ms": int(window), "scan_ms": scan_ms, "cards_ms": cards_ms}, f)
