"""A notebook (or any Python script) driving coding-agent over ACP: stdlib only.

    python3 docs/examples/notebook_client.py [PROMPT]

Starts `coding-agent` (or $CODING_AGENT, e.g. "npx coding-agent"), opens a
session in the current directory, calls the read tool directly, and, if a
model is configured (ANTHROPIC_API_KEY, OPENAI_BASE_URL, `coding-agent
login`), runs one prompt and prints the answer as it streams.
"""
import itertools, json, os, shlex, subprocess, sys

class Agent:
    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ids = itertools.count(1)

    def request(self, method, params, on_update=lambda update: None):
        id = next(self.ids)
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            msg = json.loads(line)
            if msg.get("method") == "session/update":
                on_update(msg["params"]["update"])
            elif msg.get("method") == "session/request_permission":  # a notebook says no
                self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}}}) + "\n")
                self.proc.stdin.flush()
            elif msg.get("id") == id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']['message']} ({msg['error']['code']})")
                return msg["result"]
        raise RuntimeError("coding-agent exited")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()

def show(update):
    if update["sessionUpdate"] == "agent_message_chunk":
        print(update["content"].get("text", ""), end="", flush=True)
    elif update["sessionUpdate"] == "tool_call":
        print(f"\n[{update['title']}]")

agent = Agent(shlex.split(os.environ.get("CODING_AGENT", "coding-agent")))
init = agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"_meta": {"coding-agent": {"extensions": True}}}})
print("agent:", init["agentInfo"]["name"], init["agentInfo"]["version"], "| login:", [m["id"] for m in init["authMethods"]])
session = agent.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})["sessionId"]
read = agent.request("_coding-agent/tools/call", {"sessionId": session, "name": "read", "arguments": {"path": "README.md", "limit": 3}})
print("read README.md:", read["content"][0]["text"].splitlines()[0])
try:
    stop = agent.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": " ".join(sys.argv[1:]) or "Say hello in five words."}]}, on_update=show)
    print("\nstop:", stop["stopReason"])
except RuntimeError as e:
    print("no prompt:", e)  # -32000: no model configured; run `coding-agent login`
agent.close()
