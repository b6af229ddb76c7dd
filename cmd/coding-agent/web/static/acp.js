// An ACP (JSON-RPC 2.0) client over a WebSocket. Each WebSocket text
// message carries one or more whole NDJSON lines.

export class RPCError extends Error {
  constructor(e) {
    super(e.message ?? "error");
    this.code = e.code;
    this.data = e.data;
  }
}

export class Connection {
  // handlers: {notify(method, params), request(method, params, signal) → Promise<result>, close(ev)}
  constructor(url, handlers) {
    this.handlers = handlers;
    this.nextId = 1;
    this.waiting = new Map(); // our id → {resolve, reject}
    this.incoming = new Map(); // their id → AbortController
    this.partial = "";
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.addEventListener("open", () => resolve());
      this.ws.addEventListener("error", () => reject(new Error("the connection to coding-agent failed")));
    });
    this.ws.addEventListener("message", (ev) => this.receive(ev.data));
    this.ws.addEventListener("close", (ev) => {
      for (const w of this.waiting.values()) w.reject(new Error("the connection to coding-agent closed"));
      this.waiting.clear();
      for (const a of this.incoming.values()) a.abort();
      this.handlers.close?.(ev);
    });
  }

  send(msg) {
    this.ws.send(JSON.stringify(msg) + "\n");
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      try {
        this.send({ jsonrpc: "2.0", id, method, params });
      } catch (e) {
        this.waiting.delete(id);
        reject(e);
      }
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, params });
  }

  receive(data) {
    const text = this.partial + data;
    const lines = text.split("\n");
    this.partial = lines.pop();
    for (const line of lines) {
      if (!line.trim()) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        console.warn("coding-agent: unreadable message", line.slice(0, 200));
        continue;
      }
      this.dispatch(msg);
    }
  }

  dispatch(msg) {
    if (msg.method === undefined) {
      const w = this.waiting.get(msg.id);
      if (!w) return;
      this.waiting.delete(msg.id);
      if (msg.error) w.reject(new RPCError(msg.error));
      else w.resolve(msg.result);
      return;
    }
    if (msg.id === undefined) {
      if (msg.method === "$/cancel_request" || msg.method === "$/cancelRequest") {
        const id = msg.params?.requestId ?? msg.params?.id;
        this.incoming.get(id)?.abort();
        return;
      }
      this.handlers.notify(msg.method, msg.params ?? {});
      return;
    }
    const abort = new AbortController();
    this.incoming.set(msg.id, abort);
    Promise.resolve()
      .then(() => this.handlers.request(msg.method, msg.params ?? {}, abort.signal))
      .then(
        (result) => this.send({ jsonrpc: "2.0", id: msg.id, result }),
        (e) => this.send({ jsonrpc: "2.0", id: msg.id, error: { code: e.code ?? -32603, message: String(e.message ?? e) } }),
      )
      .catch(() => {})
      .finally(() => this.incoming.delete(msg.id));
  }

  close() {
    this.ws.close(1000);
  }
}
