module github.com/coding-agent/coding-agent/test/goclient

go 1.26.8

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/coding-agent/coding-agent v0.0.0
)

replace github.com/coding-agent/coding-agent => ../..
