module github.com/coding-agent/coding-agent

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	github.com/fsnotify/fsnotify v1.10.1
	go.lsp.dev/jsonrpc2 v1.0.1
	golang.org/x/sys v0.50.0
)

require github.com/go-json-experiment/json v0.0.0-20260601182631-00ed12fed2a6 // indirect
